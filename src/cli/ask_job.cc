#include "cli/ask_job.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/json_out.h"
#include "run/session_request.h"
#include "store/marker_event_record.h"

namespace tv {

void AddJobOptions(CLI::App* cmd, std::string_view events, std::string* target, bool* json) {
  cmd->add_option("RUN|PID", *target,
                  "The running job: its run directory, or the PID of the monitor, of the job "
                  "or of one of its processes")
      ->required();
  cmd->add_flag("--json", *json,
                fmt::format("Print the processes' `{}` events as a JSON list", events));
}

int AskRunningJob(const JobAsk& ask,
                  const std::function<void(const TrainingEvent&, const std::string&)>& print) {
  LiveIdentity session;
  Status found = FindLiveSession(ask.target, &session);
  if (!found.ok()) {
    fmt::print(stderr, "trainvitals: {}: {}\n", ask.command, found.message());
    return 1;
  }
  std::vector<TrainingEvent> answers;
  Status asked = AskSession(session, ask.request, ask.wait_s, ask.settle_s, &answers);
  if (asked.code() == Status::Code::kNotFound) {
    fmt::print(stderr, "trainvitals: {}: {}: {} of {}\n", ask.command, asked.message(),
               ask.none_came, session.name);
    return 1;
  }
  if (!asked.ok()) {
    fmt::print(stderr, "trainvitals: {}: {}\n", ask.command, asked.message());
    return 1;
  }
  if (ask.json) {
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (const TrainingEvent& e : answers) all.push_back(MarkerEventFields(e));
    PrintJson(all);
    return 0;
  }
  for (const TrainingEvent& e : answers) print(e, session.run_dir);
  return 0;
}

std::string ProcessWords(const TrainingEvent& e) {
  return e.rank >= 0 ? fmt::format("rank {} (pid {})", e.rank, e.pid)
                     : fmt::format("pid {}", e.pid);
}

}  // namespace tv
