#include "sources/disks.h"

#include <algorithm>

#include "sources/text.h"

namespace tv {

void ParseDiskStats(std::string_view text, std::vector<DiskStat>* out) {
  out->clear();
  while (!text.empty()) {
    std::string_view rest = text::NextLine(&text);
    std::string_view f[10];
    int n = 0;
    while (n < 10 && !(f[n] = text::NextField(&rest)).empty()) ++n;
    if (n < 10) continue;
    std::optional<uint64_t> read = text::ParseU64(f[5]);
    std::optional<uint64_t> written = text::ParseU64(f[9]);
    if (!read || !written || !text::ParseU64(f[0]) || !text::ParseU64(f[1])) continue;
    out->push_back({f[2], *read, *written});
  }
}

std::vector<DiskStat> ParseDiskStats(std::string_view text) {
  std::vector<DiskStat> out;
  ParseDiskStats(text, &out);
  return out;
}

bool IsVirtualDisk(std::string_view name) {
  for (std::string_view prefix : {"loop", "ram", "zram", "dm-", "md"}) {
    if (name.starts_with(prefix)) return true;
  }
  return false;
}

std::string SysBlockName(std::string_view diskstats_name) {
  std::string s(diskstats_name);
  std::replace(s.begin(), s.end(), '/', '!');
  return s;
}

DisksSource::DisksSource(Env* env, std::string diskstats_path, std::string sys_block_dir)
    : env_(env), diskstats_(std::move(diskstats_path)), sys_block_dir_(std::move(sys_block_dir)) {}

bool DisksSource::Counted(std::string_view name, std::vector<Notice>* notices) {
  auto it = counted_.find(name);
  if (it != counted_.end()) return it->second;
  // A name not seen before: a new disk may have appeared, so list /sys/block again.
  Status s = env_->ListDir(sys_block_dir_.c_str(), &sys_block_);
  if (!s.ok() && !sys_block_noticed_) {
    notices->push_back({std::string(this->name()),
                        "cannot list " + s.message() + "; disks cannot be told from partitions"});
    sys_block_noticed_ = true;
  }
  std::sort(sys_block_.begin(), sys_block_.end());
  bool whole = std::binary_search(sys_block_.begin(), sys_block_.end(), SysBlockName(name));
  bool counted = whole && !IsVirtualDisk(name);
  counted_.emplace(std::string(name), counted);
  return counted;
}

void DisksSource::Read(const Tick& tick, Sample* out, std::vector<Notice>* notices) {
  if (!tick.row_tick) return;
  Status s = diskstats_.Read(env_, &buffer_);
  if (!s.ok()) {
    if (!read_noticed_) notices->push_back({std::string(name()), "cannot read " + s.message()});
    read_noticed_ = true;
    return;
  }
  ParseDiskStats(buffer_, &stats_);
  counters_.BeginRound();
  double read_sectors = 0;  // double: hostile counters must not wrap the sum
  double written_sectors = 0;
  bool any = false;
  for (const DiskStat& d : stats_) {
    if (!Counted(d.name, notices)) continue;
    auto delta = counters_.Update(d.name, {d.sectors_read, d.sectors_written});
    if (!delta) continue;
    read_sectors += static_cast<double>((*delta)[0]);
    written_sectors += static_cast<double>((*delta)[1]);
    any = true;
  }
  std::optional<double> prev = prev_mono_s_;
  prev_mono_s_ = tick.mono_s;
  if (!any || !prev || tick.mono_s <= *prev) return;
  double dt = tick.mono_s - *prev;
  double bytes_per_sector = static_cast<double>(kDiskStatsSectorBytes);
  out->host.disk_read_bytes_per_second = read_sectors * bytes_per_sector / dt;
  out->host.disk_write_bytes_per_second = written_sectors * bytes_per_sector / dt;
}

}  // namespace tv
