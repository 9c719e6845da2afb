// Host disk throughput from /proc/diskstats: bytes read and written per second
// over a row, summed over whole physical disks. Partitions are left out (they
// would count their disk twice), and so are virtual devices: loop, ram, zram,
// and dm-/md (their I/O is already counted on the member disks).
//
// Thread safety: the parsing functions are pure. DisksSource is not
// thread-safe; the sampler thread owns it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/env.h"
#include "core/source.h"
#include "sources/named_counters.h"

namespace tv {

// Bytes per sector in /proc/diskstats, whatever the device's own sector size.
inline constexpr uint64_t kDiskStatsSectorBytes = 512;

struct DiskStat {
  std::string_view name;  // points into the parsed text
  uint64_t sectors_read = 0;
  uint64_t sectors_written = 0;
};

// Parses /proc/diskstats ("major minor name reads merged sectors ms writes
// merged sectors ..."). Lines with fewer than 10 fields or non-numeric counters
// are skipped. Reuses *out.
void ParseDiskStats(std::string_view text, std::vector<DiskStat>* out);
std::vector<DiskStat> ParseDiskStats(std::string_view text);

// Whether a device name is virtual (loop, ram, zram, dm-, md) and left out.
bool IsVirtualDisk(std::string_view name);

// The /sys/block entry for a /proc/diskstats name ('/' becomes '!', as in
// "cciss!c0d0").
std::string SysBlockName(std::string_view diskstats_name);

// Fills host.disk_read_bytes_per_second and disk_write_bytes_per_second on row
// ticks, from the second row on. A device counts when its name appears in
// /sys/block (whole disks do, partitions do not) and is not virtual; each name
// is classified once, when first seen. A disk whose counters went backwards or
// that was missing from the previous row adds nothing for that row; with no
// disk to count, the rates are absent.
class DisksSource final : public Source {
 public:
  explicit DisksSource(Env* env, std::string diskstats_path = "/proc/diskstats",
                       std::string sys_block_dir = "/sys/block");
  std::string_view name() const override { return "disks"; }
  void Read(const Tick& tick, Sample* out, std::vector<Notice>* notices) override;

 private:
  bool Counted(std::string_view name, std::vector<Notice>* notices);

  Env* env_;
  HeldFile diskstats_;  // kept open: re-read in place each row
  std::string sys_block_dir_;
  std::string buffer_;
  std::vector<DiskStat> stats_;
  std::map<std::string, bool, std::less<>> counted_;  // by diskstats name
  std::vector<std::string> sys_block_;                // last listing, sorted
  bool sys_block_noticed_ = false;
  bool read_noticed_ = false;
  NamedCounters counters_;
  std::optional<double> prev_mono_s_;
};

}  // namespace tv
