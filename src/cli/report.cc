// trainvitals report RUN [-o FILE] [--compare RUN_B]: one self-contained HTML
// page of a run (charts, epochs, phases, findings, alerts, cost), optionally
// with a second run overlaid.
#include "views/report/report.h"

#include <fmt/format.h>

#include <cstdio>
#include <stdexcept>

#include "cli/commands.h"
#include "cli/options.h"
#include "core/config.h"
#include "run/run_dir.h"

namespace tv {

void AddReportCommand(CLI::App& app, Action* action) {
  auto* cmd = app.add_subcommand(
      "report",
      "Write one self-contained HTML page of a run: interactive charts of GPU, CPU, memory, power "
      "and training speed with epochs, phases, findings and alerts marked; tables of epochs, "
      "phases, findings, alerts and cost. Opens from a file, makes no network request.");
  auto run = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto compare = std::make_shared<std::string>();
  cmd->add_option("RUN", *run,
                  "Run directory, or its name in trainvitals-runs/ (\"latest\": the newest run)")
      ->required();
  cmd->add_option("-o,--out", *out, "The page to write. Default: RUN/report.html");
  cmd->add_option("--compare", *compare,
                  "A second run (directory or name) overlaid on the charts, aligned by elapsed "
                  "time, its headline figures beside RUN's");
  cmd->callback([run, out, compare, action] {
    *action = [run, out, compare]() {
      Config config;
      if (std::string file = ConfigFilePath(""); !file.empty()) ApplyConfigFile(file, config);
      ReportRequest request;
      request.run_dir = ResolveRunDir(*run, config.runs_dir);
      if (!compare->empty()) request.compare_dir = ResolveRunDir(*compare, config.runs_dir);
      request.out = *out;
      ReportWritten written;
      try {
        written = WriteReport(request);
      } catch (const std::exception& e) {
        throw ConfigError(e.what());
      }
      if (written.skipped_lines > 0) {
        fmt::print(stderr, "trainvitals: skipped {} line{} that are not rows (first: {})\n",
                   written.skipped_lines, written.skipped_lines == 1 ? "" : "s",
                   written.first_skipped);
      }
      for (const std::string& note : written.notes) fmt::print(stderr, "trainvitals: {}\n", note);
      fmt::print("{}\n", written.path);
      return 0;
    };
  });
}

}  // namespace tv
