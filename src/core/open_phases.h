// OpenPhases: the phases one training process has open, innermost last, as
// its phase_begin and phase_end markers leave them (docs/markers.md): an end
// closes the innermost open phase of its name (an end with none open is
// ignored), and at most kMax are followed. The marker source keeps one per
// process; the time account follows the lowest rank's from its marks.
//
// Thread safety: none; each owner's thread.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tv {

class OpenPhases {
 public:
  static constexpr size_t kMax = 16;

  // Opens `phase`; false (and nothing opened) when kMax are open already.
  bool Begin(std::string_view phase) {
    if (open_.size() >= kMax) return false;
    open_.emplace_back(phase);
    return true;
  }
  void End(std::string_view phase) {
    auto it = std::find(open_.rbegin(), open_.rend(), phase);
    if (it != open_.rend()) open_.erase(std::next(it).base());
  }
  void Clear() { open_.clear(); }
  bool empty() const { return open_.empty(); }
  // The innermost open phase; empty: none.
  std::string_view innermost() const {
    return open_.empty() ? std::string_view() : std::string_view(open_.back());
  }

 private:
  std::vector<std::string> open_;
};

}  // namespace tv
