// trainvitals stacks RUN|PID [--json]: the Python stacks of a running job's
// training processes, now, and where each waits (run/stacks_request.h).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/json_out.h"
#include "run/session_request.h"
#include "sources/stack_capture.h"
#include "store/marker_event_record.h"

namespace tv {

void AddStacksCommand(CLI::App& app, Action* action) {
  auto* cmd = app.add_subcommand(
      "stacks",
      "Ask a running job for the Python stacks of all its training processes' threads, now: "
      "they go to the run directory's stacks/, and each process's line says where its main "
      "thread waits (a collective, its data loader, a lock, I/O, a sleep, or running code).");
  auto target = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("RUN|PID", *target,
                  "The running job: its run directory, or the PID of the monitor, of the job "
                  "or of one of its processes")
      ->required();
  cmd->add_flag("--json", *json, "Print the processes' `stacks` events as a JSON list");
  cmd->callback([=] {
    *action = [=]() {
      LiveIdentity session;
      Status found = FindLiveSession(*target, &session);
      if (!found.ok()) {
        fmt::print(stderr, "trainvitals: stacks: {}\n", found.message());
        return 1;
      }
      std::vector<TrainingEvent> answers;
      Marker request;
      request.what = "stacks";
      // A capture's events are written in one go: a little after the first, all are.
      Status asked = AskSession(session, request, StackCapture::kWait_s + 5, 0.3, &answers);
      if (asked.code() == Status::Code::kNotFound) {
        fmt::print(stderr,
                   "trainvitals: stacks: {}: no training process of {} offers its stacks (they "
                   "need the trainvitals Python package, a callback or monitor(), and not "
                   "TRAINVITALS_STACKS=0)\n",
                   asked.message(), session.name);
        return 1;
      }
      if (!asked.ok()) {
        fmt::print(stderr, "trainvitals: stacks: {}\n", asked.message());
        return 1;
      }
      if (*json) {
        nlohmann::ordered_json all = nlohmann::ordered_json::array();
        for (const TrainingEvent& e : answers) all.push_back(MarkerEventFields(e));
        PrintJson(all);
        return 0;
      }
      for (const TrainingEvent& e : answers) {
        const StackWait& w = *e.stacks;
        std::string who = e.rank >= 0 ? fmt::format("rank {} (pid {})", e.rank, e.pid)
                                      : fmt::format("pid {}", e.pid);
        if (w.waits_in == "no-answer") {
          fmt::print("{}: did not answer (it is {})\n", who, w.state);
          continue;
        }
        fmt::print("{}: waits in {} at {}\n", who, w.waits_in, w.frame);
        if (!w.at.empty()) {
          fmt::print("  from {}{}\n", w.at, w.code.empty() ? "" : fmt::format(": {}", w.code));
        }
        if (!w.file.empty()) fmt::print("  stacks: {}/{}\n", session.run_dir, w.file);
      }
      return 0;
    };
  });
}

}  // namespace tv
