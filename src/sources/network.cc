#include "sources/network.h"

#include "sources/text.h"

namespace tv {

void ParseNetDev(std::string_view text, std::vector<NetDevStat>* out) {
  out->clear();
  while (!text.empty()) {
    std::string_view line = text::NextLine(&text);
    // Interface names cannot hold ':'; old kernels glue the first counter to it.
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view name = text::Trim(line.substr(0, colon));
    if (name.empty()) continue;
    std::string_view rest = line.substr(colon + 1);
    std::optional<uint64_t> v[9];
    bool ok = true;
    for (auto& x : v) {
      x = text::ParseU64(text::NextField(&rest));
      ok = ok && x.has_value();
    }
    if (!ok) continue;
    out->push_back({name, *v[0], *v[8]});
  }
}

std::vector<NetDevStat> ParseNetDev(std::string_view text) {
  std::vector<NetDevStat> out;
  ParseNetDev(text, &out);
  return out;
}

NetworkSource::NetworkSource(Env* env, std::string path) : env_(env), file_(std::move(path)) {}

void NetworkSource::Read(const Tick& tick, Sample* out, std::vector<Notice>* notices) {
  if (!tick.row_tick) return;
  Status s = file_.Read(env_, &buffer_);
  if (!s.ok()) {
    if (!noticed_) notices->push_back({std::string(name()), "cannot read " + s.message()});
    noticed_ = true;
    return;
  }
  ParseNetDev(buffer_, &stats_);
  counters_.BeginRound();
  double rx = 0;  // double: hostile counters must not wrap the sum
  double tx = 0;
  bool any = false;
  for (const NetDevStat& d : stats_) {
    if (d.name == "lo") continue;
    auto delta = counters_.Update(d.name, {d.rx_bytes, d.tx_bytes});
    if (!delta) continue;
    rx += static_cast<double>((*delta)[0]);
    tx += static_cast<double>((*delta)[1]);
    any = true;
  }
  std::optional<double> prev = prev_mono_s_;
  prev_mono_s_ = tick.mono_s;
  if (!any || !prev || tick.mono_s <= *prev) return;
  double dt = tick.mono_s - *prev;
  out->host.net_rx_bytes_per_second = rx / dt;
  out->host.net_tx_bytes_per_second = tx / dt;
}

}  // namespace tv
