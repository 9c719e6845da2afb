// Space on the file system that holds the run directory (statvfs(2)): what an
// unprivileged writer can still use, and the file system's size. A full disk
// ends a run's record (samples.jsonl, checkpoints beside it), so the alert
// rules watch it (run-dir-disk-full).
//
// Read on the first tick and on row ticks (free space moves slowly); the ticks
// between carry the last reading. A directory that cannot be examined (removed,
// its file system gone) leaves both values absent, never 0, and is said once.
//
// Thread safety: PosixStatFs is safe from any thread. RunDirSpaceSource is not
// thread-safe; the sampler thread owns it.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/source.h"
#include "core/status.h"

namespace tv {

struct FsSpace {
  double free_bytes = 0;  // f_bavail * f_frsize: left to an unprivileged writer
  double size_bytes = 0;  // f_blocks * f_frsize
};

// Fills *out for the file system holding `path`.
using StatFs = std::function<Status(const char* path, FsSpace* out)>;

// statvfs(2) of `path`.
Status PosixStatFs(const char* path, FsSpace* out);

// Fills host.run_dir_free_bytes and host.run_dir_size_bytes.
class RunDirSpaceSource final : public Source {
 public:
  // `statfs`: the file system seam; tests pass a fake.
  explicit RunDirSpaceSource(std::string dir, StatFs statfs = PosixStatFs);
  std::string_view name() const override { return "run_dir_space"; }
  void Read(const Tick& tick, Sample* out, std::vector<Notice>* notices) override;

 private:
  std::string dir_;
  StatFs statfs_;
  bool read_once_ = false;
  std::optional<FsSpace> last_;  // absent after a failed reading
  bool noticed_ = false;
};

}  // namespace tv
