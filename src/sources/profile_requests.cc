#include "sources/profile_requests.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "markers/protocol.h"

namespace tv {

bool ProfileRequests::Request(std::string_view reason, int64_t steps, int target,
                              std::string_view id) {
  const StepSlot* slots = endpoint_->slots();
  std::vector<int> asked;
  for (uint32_t i = 0; i < kStepSlots; ++i) {
    if (slots[i].pid.load(std::memory_order_acquire) == 0) continue;
    if (target >= 0 && slots[i].rank.load(std::memory_order_relaxed) != target) continue;
    asked.push_back(static_cast<int>(i));
  }
  if (asked.empty()) return false;
  uint32_t seq = seq_ + 1;
  nlohmann::ordered_json request = {
      {"seq", seq}, {"what", "profile"}, {"reason", reason}, {"steps", steps}};
  if (!id.empty()) request["id"] = id;
  std::string text = request.dump();
  std::string path = RequestPathFor(endpoint_->socket_path());
  std::string part = path + ".part";
  int fd = ::open(part.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return false;
  bool whole = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!whole || std::rename(part.c_str(), path.c_str()) != 0) {
    ::unlink(part.c_str());
    return false;
  }
  seq_ = seq;
  for (int i : asked) endpoint_->SignalRequest(i, seq);
  return true;
}

bool ProfileRequests::RequestFor(std::string_view finding, int64_t steps, double step_s,
                                 double run_s, double budget) {
  if (steps <= 0 || asked_.contains(finding)) return false;
  double estimate = static_cast<double>(steps) * step_s;
  if (std::max(spent_s_, promised_s_) + estimate > budget * run_s) return false;
  if (!Request(finding, steps, -1, "")) return false;
  asked_.emplace(finding);
  promised_s_ += estimate;
  return true;
}

}  // namespace tv
