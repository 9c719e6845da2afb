// trainvitals run [options] -- COMMAND [ARGS...]
#include <fmt/format.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "cli/child.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "run/session.h"
#include "sources/gpu_deferred.h"

namespace tv {

void AddRunCommand(CLI::App& app, const std::vector<std::string>& after_dashes, Action* action) {
  auto* cmd = app.add_subcommand(
      "run",
      "Run COMMAND, monitor it and its whole process tree, write a run directory and print a "
      "summary. Exits with COMMAND's own exit code (128+N if it died of signal N). Training "
      "processes using the trainvitals Python package report steps, epochs and phases to it "
      "through TRAINVITALS_SOCKET (docs/markers.md).");
  auto options = std::make_shared<MonitorOptions>();
  auto command = std::make_shared<std::vector<std::string>>();
  options->AddTo(cmd);
  cmd->prefix_command();  // everything from COMMAND on is the command's own
  cmd->footer(
      "Usage: trainvitals run [OPTIONS] [--] COMMAND [ARGS...]\nExample: trainvitals run "
      "--interval 2 -- python train.py --epochs 5");
  cmd->callback([cmd, options, command, action, &after_dashes] {
    *command = cmd->remaining();
    if (!command->empty() && !after_dashes.empty()) {
      throw CLI::ExtrasError("run", *command);
    }
    if (command->empty()) *command = after_dashes;
    if (command->empty()) throw CLI::RequiredError("COMMAND (give it after --)");
    *action = [options, command]() -> int {
      Config config = options->Resolve();
      Session session(config, *command, "run");
      // The child tree reports steps, epochs and phases here (docs/markers.md).
      if (std::string socket = session.marker_socket(); !socket.empty()) {
        ::setenv(kMarkerSocketEnv, socket.c_str(), 1);
      }
      int start_error = 0;
      std::string error;
      int child = SpawnChild(*command, &start_error, &error);
      if (child < 0) {
        session.Abandon();
        fmt::print(stderr, "{}\n", error);
        return start_error;
      }
      session.Start(child);
      ChildExit exit = SuperviseChild(child, [&](int sig) {
        session.AddEvent("signal_forwarded", {{"signal", sig}, {"name", sigabbrev_np(sig)}});
      });
      session.Finish(exit.code, exit.signal);
      if (DeferredGpuSource::OpeningsInFlight() > 0) {
        // The GPU driver is still initialising on its own thread (a command
        // shorter than that): everything is written, so leave without running
        // the driver's static destructors under it.
        std::fflush(nullptr);
        ::_exit(exit.code);
      }
      return exit.code;
    };
  });
}

}  // namespace tv
