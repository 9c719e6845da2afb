// trainvitals docs metrics|options|findings: prints the generated Markdown that
// docs/schema.md, docs/cli.md and docs/findings.md carry (hidden; used by `make docs`).
#include <fmt/format.h>

#include "analysis/findings/table.h"
#include "cli/commands.h"
#include "core/config.h"
#include "core/metrics.h"

namespace tv {

void AddDocsCommand(CLI::App& app, Action* action) {
  auto* cmd = app.add_subcommand("docs", "Print generated documentation tables");
  cmd->group("");  // hidden from --help
  auto what = std::make_shared<std::string>();
  cmd->add_option("what", *what, "metrics, options or findings")
      ->required()
      ->check(CLI::IsMember({"metrics", "options", "findings"}));
  cmd->callback([what, action] {
    *action = [what]() {
      fmt::print("{}", *what == "metrics"   ? MetricsMarkdown()
                       : *what == "options" ? OptionsMarkdown()
                                            : FindingsMarkdown());
      return 0;
    };
  });
}

}  // namespace tv
