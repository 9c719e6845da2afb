#include "sources/run_dir_space.h"

#include <sys/statvfs.h>

#include <cerrno>

namespace tv {

Status PosixStatFs(const char* path, FsSpace* out) {
  struct statvfs st {};
  if (::statvfs(path, &st) != 0) return ErrnoStatus(path, errno);
  double block = static_cast<double>(st.f_frsize != 0 ? st.f_frsize : st.f_bsize);
  out->free_bytes = static_cast<double>(st.f_bavail) * block;
  out->size_bytes = static_cast<double>(st.f_blocks) * block;
  return Status::Ok();
}

RunDirSpaceSource::RunDirSpaceSource(std::string dir, StatFs statfs)
    : dir_(std::move(dir)), statfs_(std::move(statfs)) {}

void RunDirSpaceSource::Read(const Tick& tick, Sample* out, std::vector<Notice>* notices) {
  if (tick.row_tick || !read_once_) {
    read_once_ = true;
    FsSpace space;
    Status s = statfs_(dir_.c_str(), &space);
    // A file system of no size (a pseudo file system) says nothing about space.
    if (s.ok() && space.size_bytes > 0 && space.free_bytes >= 0) {
      last_ = space;
    } else {
      last_.reset();
      if (!noticed_) {
        notices->push_back(
            {std::string(name()), s.ok() ? "no size known for the file system of " + dir_
                                         : "cannot read the free space of " + s.message()});
      }
      noticed_ = true;
    }
  }
  if (!last_) return;
  out->host.run_dir_free_bytes = last_->free_bytes;
  out->host.run_dir_size_bytes = last_->size_bytes;
}

}  // namespace tv
