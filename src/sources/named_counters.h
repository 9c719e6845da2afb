// NamedCounters: the previous value of a pair of monotonic counters per name
// (a disk, an interface), turned into increases from one round of reads to the
// next. Used by the disk and network sources for rates over a row.
//
// Thread safety: not thread-safe; owned by one source on the sampler thread.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace tv {

class NamedCounters {
 public:
  using Values = std::array<uint64_t, 2>;

  // Starts a new round of reads.
  void BeginRound() { ++round_; }

  // Records `values` for `name` in this round. Returns the increase since the
  // previous round, or absent when `name` was not read in the previous round
  // (new, or back after a gap) or a counter went backwards (reset, 32-bit wrap,
  // device replaced): its new value is then the baseline for the next round.
  std::optional<Values> Update(std::string_view name, Values values);

 private:
  struct Entry {
    Values values{};
    uint64_t round = 0;
  };
  std::map<std::string, Entry, std::less<>> entries_;
  uint64_t round_ = 1;
};

}  // namespace tv
