#include "sinks/visualdl/vdl_sink.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "sinks/visualdl/vdl_encoder.h"

namespace tv {

std::unique_ptr<VdlSink> VdlSink::Open(const std::string& logdir, double start_wall,
                                       double interval_s, std::string* error) {
  std::string dir = logdir + "/system";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    *error = fmt::format("--visualdl: cannot create {}: {}", dir, ec.message());
    return nullptr;
  }
  for (int n = 0; n < 100; ++n) {
    // A second start in the same second gets a suffix that sorts after the
    // first name, so VisualDL's newest-file rule still picks it.
    std::string path =
        fmt::format("{}/vdlrecords.{:010d}.log{}", dir, static_cast<int64_t>(start_wall),
                    n == 0 ? std::string() : fmt::format(".{:02d}", n));
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EEXIST) continue;
    if (fd < 0) {
      *error = fmt::format("--visualdl: cannot write in {}: {}", dir, std::strerror(errno));
      return nullptr;
    }
    std::unique_ptr<VdlSink> sink(new VdlSink(fd, path, interval_s));
    AppendVdlRecord(EncodeVdlMetaData(std::llround(start_wall * 1000)), &sink->buffer_);
    sink->Write();
    if (sink->write_failed_) {
      *error = fmt::format("--visualdl: cannot write {}", path);
      sink->Discard();
      return nullptr;
    }
    return sink;
  }
  *error = fmt::format("--visualdl: no free log file name in {}", dir);
  return nullptr;
}

VdlSink::VdlSink(int fd, std::string path, double interval_s)
    : fd_(fd), path_(std::move(path)), stepper_(interval_s) {}

VdlSink::~VdlSink() { OnClose(); }

void VdlSink::Write() {
  if (fd_ < 0) return;
  size_t done = 0;
  while (done < buffer_.size()) {
    ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (!write_failed_) {
        fmt::print(stderr, "trainvitals: cannot write {}: {} (monitoring goes on)\n", path_,
                   n < 0 ? std::strerror(errno) : "short write");
        write_failed_ = true;
      }
      break;
    }
    done += static_cast<size_t>(n);
  }
  buffer_.clear();
}

void VdlSink::OnRow(const Row& row) {
  std::vector<TbScalar> scalars = RowScalars(row);
  if (scalars.empty()) return;
  int64_t step = stepper_.Next(row);
  int64_t ms = std::llround(row.t * 1000);
  for (const TbScalar& s : scalars)
    AppendVdlRecord(EncodeVdlScalar(s.tag, step, ms, s.value), &buffer_);
  Write();
}

void VdlSink::OnClose() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

void VdlSink::Discard() {
  OnClose();
  ::unlink(path_.c_str());
  std::error_code ec;
  std::filesystem::remove(std::filesystem::path(path_).parent_path(), ec);  // only if empty
}

}  // namespace tv
