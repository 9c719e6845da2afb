// trainvitals docs metrics|options|findings|alerts: prints the generated Markdown that
// docs/schema.md, docs/cli.md, docs/findings.md and docs/alerts.md carry (hidden; used by `make docs`).
#include <fmt/format.h>

#include "analysis/alerts/rules_file.h"
#include "analysis/findings/table.h"
#include "cli/commands.h"
#include "core/config.h"
#include "core/metrics.h"

namespace tv {

void AddDocsCommand(CLI::App& app, Action* action) {
  auto* cmd = app.add_subcommand("docs", "Print generated documentation tables");
  cmd->group("");  // hidden from --help
  auto what = std::make_shared<std::string>();
  cmd->add_option("what", *what, "metrics, options, findings or alerts")
      ->required()
      ->check(CLI::IsMember({"metrics", "options", "findings", "alerts"}));
  cmd->callback([what, action] {
    *action = [what]() {
      fmt::print("{}", *what == "metrics"    ? MetricsMarkdown()
                       : *what == "options"  ? OptionsMarkdown()
                       : *what == "findings" ? FindingsMarkdown()
                                             : BuiltinAlertsMarkdown());
      return 0;
    };
  });
}

}  // namespace tv
