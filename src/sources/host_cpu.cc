#include "sources/host_cpu.h"

#include <algorithm>

#include "sources/text.h"

namespace tv {
namespace {

// Columns of a cpu line that count towards total: user nice system idle iowait
// irq softirq steal. guest and guest_nice (9th, 10th) are inside user and nice.
constexpr int kTotalColumns = 8;
constexpr int kMinColumns = 4;  // Linux 2.4 had only user nice system idle

std::optional<CpuTimes> ParseCpuColumns(std::string_view rest) {
  CpuTimes t;
  int n = 0;
  for (std::string_view f = text::NextField(&rest); !f.empty(); f = text::NextField(&rest)) {
    std::optional<uint64_t> v = text::ParseU64(f);
    if (!v) return std::nullopt;
    if (n < kTotalColumns) {
      if (__builtin_add_overflow(t.total, *v, &t.total)) return std::nullopt;
      if (n == 3 || n == 4) t.idle += *v;  // idle, iowait; cannot overflow past total
      if (n == 4) t.iowait = *v;
    }
    ++n;
  }
  if (n < kMinColumns) return std::nullopt;
  return t;
}

}  // namespace

void ParseProcStatCpu(std::string_view text, ProcStatCpu* out) {
  out->all.reset();
  out->cores.clear();
  while (!text.empty()) {
    std::string_view line = text::NextLine(&text);
    if (!line.starts_with("cpu")) continue;
    std::string_view rest = line;
    std::string_view label = text::NextField(&rest);
    std::optional<CpuTimes> times = ParseCpuColumns(rest);
    if (!times) continue;
    if (label == "cpu") {
      out->all = times;
      continue;
    }
    std::optional<uint64_t> id = text::ParseU64(label.substr(3));
    if (!id || *id >= static_cast<uint64_t>(kMaxCpuId)) continue;
    out->cores.push_back({static_cast<int>(*id), *times});
  }
}

ProcStatCpu ParseProcStatCpu(std::string_view text) {
  ProcStatCpu out;
  ParseProcStatCpu(text, &out);
  return out;
}

std::optional<double> BusyRatio(const CpuTimes& prev, const CpuTimes& cur) {
  if (cur.total < prev.total || cur.idle < prev.idle) return std::nullopt;
  uint64_t total = cur.total - prev.total;
  uint64_t idle = cur.idle - prev.idle;
  if (total == 0) return std::nullopt;
  if (idle > total) return 0.0;
  return static_cast<double>(total - idle) / static_cast<double>(total);
}

std::optional<double> IowaitRatio(const CpuTimes& prev, const CpuTimes& cur) {
  if (cur.total <= prev.total || cur.iowait < prev.iowait) return std::nullopt;
  // iowait may step back on some kernels (it is an estimate per CPU): then unknown.
  double ratio =
      static_cast<double>(cur.iowait - prev.iowait) / static_cast<double>(cur.total - prev.total);
  return ratio > 1 ? 1.0 : ratio;
}

HostCpuSource::HostCpuSource(Env* env, std::string path) : env_(env), file_(std::move(path)) {}

void HostCpuSource::Read(const Tick& tick, Sample* out, std::vector<Notice>* notices) {
  HostSample& h = out->host;
  if (!tick.row_tick && prev_all_) {
    if (cores_online_ > 0) h.cpu_limit_cores = cores_online_;
    behind_ = true;
    return;
  }
  behind_ = false;
  Status s = file_.Read(env_, &buffer_);
  if (!s.ok()) {
    if (!noticed_) notices->push_back({std::string(name()), "cannot read " + s.message()});
    noticed_ = true;
    prev_all_.reset();
    return;
  }
  ParseProcStatCpu(buffer_, &cur_);

  if (cur_.all && prev_all_) {
    h.cpu_util_ratio = BusyRatio(*prev_all_, *cur_.all);
    h.cpu_iowait_ratio = IowaitRatio(*prev_all_, *cur_.all);
  }
  prev_all_ = cur_.all;

  cores_online_ = static_cast<double>(cur_.cores.size());
  if (cores_online_ > 0) h.cpu_limit_cores = cores_online_;
  bool all_known = !cur_.cores.empty();
  for (const CoreTimes& c : cur_.cores) {
    size_t id = static_cast<size_t>(c.id);
    std::optional<double> r;
    if (id < prev_core_.size() && prev_core_[id]) r = BusyRatio(*prev_core_[id], c.times);
    if (!r) all_known = false;
    if (all_known) h.core_util_ratio.push_back(*r);
  }
  if (!all_known) h.core_util_ratio.clear();

  // Remember this read; cores absent now (offline) forget their previous read.
  for (auto& p : prev_core_) p.reset();
  for (const CoreTimes& c : cur_.cores) {
    size_t id = static_cast<size_t>(c.id);
    if (id >= prev_core_.size()) prev_core_.resize(id + 1);
    prev_core_[id] = c.times;
  }
}

bool HostCpuSource::Flush(Sample* out) {
  if (!behind_) return false;
  std::vector<Notice> said_before;  // a failure was said when it began
  Read({.row_tick = true}, out, &said_before);
  return out->host.cpu_util_ratio.has_value();
}

}  // namespace tv
