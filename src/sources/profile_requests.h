// ProfileRequests: the sampler's side of profile captures (docs/markers.md
// "Profiles"). A request is written whole to the request file beside the
// marker socket (renamed into place), then its number into the step slot of
// each process asked; the process notices it at its next step, profiles the
// steps asked with its framework's profiler and says `profile` when done.
//
// A finding asks once per run and only within the budget: the time the
// processes spent profiling, with this capture's estimate, stays under
// `budget` of the run's time. A request from `trainvitals profile` always goes.
//
// Thread safety: none; the marker source's (sampler) thread owns it.
#pragma once

#include <set>
#include <string>
#include <string_view>

#include "markers/endpoint.h"

namespace tv {

class ProfileRequests {
 public:
  explicit ProfileRequests(MarkerEndpoint* endpoint) : endpoint_(endpoint) {}

  // Asks the processes of rank `target` (-1: every process with a slot) to
  // profile `steps` steps for `reason`; `id`: the asker's name. False when
  // none was asked (no process, the file could not be written).
  bool Request(std::string_view reason, int64_t steps, int target, std::string_view id);
  // The same for a finding: once per `finding` a run, and only when `steps`
  // of `step_s` each fit the budget at `run_s` into the run.
  bool RequestFor(std::string_view finding, int64_t steps, double step_s, double run_s,
                  double budget);
  // A process said it profiled for `seconds`.
  void Spent(double seconds) { spent_s_ += seconds; }

 private:
  MarkerEndpoint* endpoint_;
  uint32_t seq_ = 0;
  double spent_s_ = 0;
  double promised_s_ = 0;  // the estimates of captures asked for
  std::set<std::string, std::less<>> asked_;
};

}  // namespace tv
