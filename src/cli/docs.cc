// trainvitals docs metrics|events|options|findings|alerts: prints the generated Markdown
// that docs/schema.md, docs/cli.md, docs/findings.md and docs/alerts.md carry (hidden; used by
// `make docs`).
#include <fmt/format.h>

#include "analysis/alerts/promql.h"
#include "analysis/alerts/rules_file.h"
#include "analysis/findings/table.h"
#include "cli/commands.h"
#include "core/config.h"
#include "core/event_type.h"
#include "core/metrics.h"

namespace tv {

void AddDocsCommand(CLI::App& app, Action* action) {
  auto* cmd = app.add_subcommand("docs", "Print generated documentation tables");
  cmd->group("");  // hidden from --help
  auto what = std::make_shared<std::string>();
  cmd->add_option("what", *what, "metrics, events, options, findings, alerts or prometheus-rules")
      ->required()
      ->check(CLI::IsMember(
          {"metrics", "events", "options", "findings", "alerts", "prometheus-rules"}));
  cmd->callback([what, action] {
    *action = [what]() {
      fmt::print("{}", *what == "metrics"    ? MetricsMarkdown()
                       : *what == "events"   ? EventsMarkdown()
                       : *what == "options"  ? OptionsMarkdown()
                       : *what == "findings" ? FindingsMarkdown()
                       : *what == "alerts"   ? BuiltinAlertsMarkdown()
                                             : PrometheusRulesYaml(*LoadAlertRules(Config())));
      return 0;
    };
  });
}

}  // namespace tv
