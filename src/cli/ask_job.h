// What `trainvitals stacks` and `trainvitals profile` share: find the running
// session the user named, send it a request and print the events that answer.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <string_view>

#include "core/training_sample.h"
#include "markers/protocol.h"

namespace tv {

struct JobAsk {
  std::string_view command;    // "stacks", for its errors
  std::string target;          // RUN|PID
  Marker request;              // its `what` and arguments
  double wait_s = 10;          // for the first answer
  double settle_s = 1;         // with no more after the last
  std::string_view none_came;  // why nothing may have come, said when nothing did
  bool json = false;           // print the events as a JSON list
};

// The options both commands take: RUN|PID (required) and --json, which
// prints the processes' `events` events.
void AddJobOptions(CLI::App* cmd, std::string_view events, std::string* target, bool* json);

// Asks and prints each answer with `print` (its event and the run directory),
// or the events as JSON; the process exit code.
int AskRunningJob(const JobAsk& ask,
                  const std::function<void(const TrainingEvent&, const std::string&)>& print);

// "rank 1 (pid 4122)", or "pid 4122" when not distributed.
std::string ProcessWords(const TrainingEvent& e);

}  // namespace tv
