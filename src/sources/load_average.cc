#include "sources/load_average.h"

#include "sources/text.h"

namespace tv {

std::optional<LoadAverage> ParseLoadAvg(std::string_view text) {
  double v[3];
  for (double& x : v) {
    std::optional<double> d = text::ParseDouble(text::NextField(&text));
    if (!d || *d < 0) return std::nullopt;
    x = *d;
  }
  return LoadAverage{v[0], v[1], v[2]};
}

std::optional<uint64_t> ParseLastPid(std::string_view text) {
  for (int i = 0; i < 4; ++i) text::NextField(&text);
  return text::ParseU64(text::NextField(&text));
}

LoadAverageSource::LoadAverageSource(Env* env, std::string path)
    : env_(env), file_(std::move(path)) {}

void LoadAverageSource::Read(const Tick& tick, Sample* out, std::vector<Notice>* notices) {
  Status s = file_.Read(env_, &buffer_);
  if (!s.ok()) {
    if (!noticed_) notices->push_back({std::string(name()), "cannot read " + s.message()});
    noticed_ = true;
    return;
  }
  out->host.last_pid = ParseLastPid(buffer_);
  if (!tick.row_tick) return;
  std::optional<LoadAverage> l = ParseLoadAvg(buffer_);
  if (!l) return;
  out->host.load1 = l->load1;
  out->host.load5 = l->load5;
  out->host.load15 = l->load15;
}

}  // namespace tv
