// trainvitals check [--json]
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/json_out.h"
#include "core/env.h"
#include "sources/machine_check.h"

namespace tv {

void AddCheckCommand(CLI::App& app, Action* action) {
  auto* cmd = app.add_subcommand(
      "check",
      "Show what this machine offers: process-tree following, cgroup limits, CPU energy (RAPL) "
      "and GPUs, with the reason for anything missing.");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print the report as JSON");
  cmd->callback([json, action] {
    *action = [json]() {
      auto report = CheckMachine(Env::Default());
      if (*json) {
        PrintJson(report);
      } else {
        fmt::print("{}", FormatMachineCheck(report));
      }
      return 0;
    };
  });
}

}  // namespace tv
