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

LoadAverageSource::LoadAverageSource(Env* env, std::string path)
    : env_(env), path_(std::move(path)) {}

void LoadAverageSource::Read(const Tick& tick, Sample* out, std::vector<Notice>* notices) {
  if (!tick.row_tick) return;
  Status s = env_->ReadFile(path_.c_str(), &buffer_);
  if (!s.ok()) {
    if (!noticed_) notices->push_back({std::string(name()), "cannot read " + s.message()});
    noticed_ = true;
    return;
  }
  std::optional<LoadAverage> l = ParseLoadAvg(buffer_);
  if (!l) return;
  out->host.load1 = l->load1;
  out->host.load5 = l->load5;
  out->host.load15 = l->load15;
}

}  // namespace tv
