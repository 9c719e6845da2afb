// trainvitals stacks RUN|PID [--json]: the Python stacks of a running job's
// training processes, now, and where each waits (run/stacks_request.h).
#include <fmt/format.h>

#include "cli/ask_job.h"
#include "cli/commands.h"
#include "sources/stack_capture.h"

namespace tv {

void AddStacksCommand(CLI::App& app, Action* action) {
  auto* cmd = app.add_subcommand(
      "stacks",
      "Ask a running job for the Python stacks of all its training processes' threads, now: "
      "they go to the run directory's stacks/, and each process's line says where its main "
      "thread waits (a collective, its data loader, a lock, I/O, a sleep, or running code).");
  auto target = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  AddJobOptions(cmd, "stacks", target.get(), json.get());
  cmd->callback([=] {
    *action = [=]() {
      JobAsk ask{.command = "stacks",
                 .target = *target,
                 .request = Marker{.what = "stacks"},
                 // A capture's events are written in one go: a little after the first, all are.
                 .wait_s = StackCapture::kWait_s + 5,
                 .settle_s = 0.3,
                 .none_came =
                     "no training process offers its stacks (it needs the trainvitals "
                     "Python package, a callback or monitor(), and not "
                     "TRAINVITALS_STACKS=0)",
                 .json = *json};
      return AskRunningJob(ask, [](const TrainingEvent& e, const std::string& run_dir) {
        const StackWait& w = *e.stacks;
        if (w.waits_in == "no-answer") {
          fmt::print("{}: did not answer (it is {})\n", ProcessWords(e), w.state);
          return;
        }
        fmt::print("{}: waits in {} at {}\n", ProcessWords(e), w.waits_in, w.frame);
        if (!w.at.empty()) {
          fmt::print("  from {}{}\n", w.at, w.code.empty() ? "" : fmt::format(": {}", w.code));
        }
        if (!w.file.empty()) fmt::print("  stacks: {}/{}\n", run_dir, w.file);
      });
    };
  });
}

}  // namespace tv
