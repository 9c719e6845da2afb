// Host network throughput from /proc/net/dev: bytes received and sent per second
// over a row, summed over every interface but loopback.
//
// Thread safety: ParseNetDev is pure. NetworkSource is not thread-safe; the
// sampler thread owns it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/env.h"
#include "core/source.h"
#include "sources/named_counters.h"

namespace tv {

struct NetDevStat {
  std::string_view name;  // points into the parsed text
  uint64_t rx_bytes = 0;
  uint64_t tx_bytes = 0;
};

// Parses /proc/net/dev ("  eth0: rx_bytes rx_packets ... (8 receive columns)
// tx_bytes ..."). The two header lines, lines without ':' and lines with fewer
// than 9 counters or non-numeric ones are skipped. Reuses *out.
void ParseNetDev(std::string_view text, std::vector<NetDevStat>* out);
std::vector<NetDevStat> ParseNetDev(std::string_view text);

// Fills host.net_rx_bytes_per_second and net_tx_bytes_per_second on row ticks,
// from the second row on. An interface whose counters went backwards (reset,
// 32-bit wrap) or that was missing from the previous row adds nothing for that
// row; with no interface to count, the rates are absent.
class NetworkSource final : public Source {
 public:
  explicit NetworkSource(Env* env, std::string path = "/proc/net/dev");
  std::string_view name() const override { return "network"; }
  void Read(const Tick& tick, Sample* out, std::vector<Notice>* notices) override;

 private:
  Env* env_;
  HeldFile file_;  // kept open: re-read in place each row
  std::string buffer_;
  std::vector<NetDevStat> stats_;
  NamedCounters counters_;
  std::optional<double> prev_mono_s_;
  bool noticed_ = false;
};

}  // namespace tv
