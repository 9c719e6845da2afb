// trainvitals export RUN --format csv [--output FILE]
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "cli/options.h"
#include "core/config.h"
#include "run/run_dir.h"
#include "sinks/csv_export.h"

namespace tv {

void AddExportCommand(CLI::App& app, Action* action) {
  auto* cmd = app.add_subcommand(
      "export",
      "Convert a run directory's samples.jsonl to another format (CSV: one column per "
      "flattened key, e.g. host.cpu_util_ratio, gpu0.util_ratio).");
  auto run = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("csv");
  auto output = std::make_shared<std::string>();
  cmd->add_option("RUN", *run, RunArgumentHelp("The run"))->required();
  cmd->add_option("--format", *format, "Output format")
      ->check(CLI::IsMember({"csv"}))
      ->capture_default_str();
  cmd->add_option("--output", *output, "File to write (default: standard output)");
  cmd->callback([run, format, output, action] {
    *action = [run, format, output]() {
      std::string dir = ResolveRunDir(*run, Config().runs_dir);
      std::string samples = (std::filesystem::path(dir) / "samples.jsonl").string();
      if (output->empty()) {
        ExportCsv(samples, std::cout);
        std::cout.flush();
        return 0;
      }
      std::string tmp = *output + ".tmp";
      {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) throw ConfigError(fmt::format("--output: cannot write {}", *output));
        try {
          ExportCsv(samples, out);
        } catch (...) {
          std::filesystem::remove(tmp);
          throw;
        }
      }
      std::error_code ec;
      std::filesystem::rename(tmp, *output, ec);
      if (ec)
        throw ConfigError(fmt::format("--output: cannot write {}: {}", *output, ec.message()));
      return 0;
    };
  });
}

}  // namespace tv
