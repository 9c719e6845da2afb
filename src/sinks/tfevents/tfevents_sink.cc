#include "sinks/tfevents/tfevents_sink.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace tv {
namespace {

std::atomic<int> file_counter{0};

}  // namespace

std::unique_ptr<TfeventsSink> TfeventsSink::Open(const std::string& logdir, double start_wall,
                                                 double interval_s, std::string* error) {
  std::string dir = logdir + "/system";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    *error = fmt::format("--tensorboard: cannot create {}: {}", dir, ec.message());
    return nullptr;
  }
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string path =
        fmt::format("{}/events.out.tfevents.{:010d}.{}.{}.{}", dir,
                    static_cast<int64_t>(start_wall), host, ::getpid(), file_counter.fetch_add(1));
    // O_EXCL: a restart into the same directory gets a new file, never appends.
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EEXIST) continue;
    if (fd < 0) {
      *error = fmt::format("--tensorboard: cannot write in {}: {}", dir, std::strerror(errno));
      return nullptr;
    }
    std::unique_ptr<TfeventsSink> sink(new TfeventsSink(fd, path, interval_s));
    sink->WriteRecord(EncodeFileVersionEvent(start_wall));
    if (sink->write_failed_) {
      *error = fmt::format("--tensorboard: cannot write {}", path);
      sink->Discard();
      return nullptr;
    }
    return sink;
  }
  *error = fmt::format("--tensorboard: no free event file name in {}", dir);
  return nullptr;
}

TfeventsSink::TfeventsSink(int fd, std::string path, double interval_s)
    : fd_(fd), path_(std::move(path)), stepper_(interval_s) {}

TfeventsSink::~TfeventsSink() { OnClose(); }

void TfeventsSink::WriteRecord(const std::string& event) {
  if (fd_ < 0) return;
  buffer_.clear();
  AppendTfRecord(event, &buffer_);
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
      return;
    }
    done += static_cast<size_t>(n);
  }
}

void TfeventsSink::OnRow(const Row& row) {
  std::vector<TbScalar> scalars = RowScalars(row);
  if (scalars.empty()) return;
  WriteRecord(EncodeScalarEvent(row.t, stepper_.Next(row), scalars));
}

void TfeventsSink::OnClose() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

void TfeventsSink::Discard() {
  OnClose();
  ::unlink(path_.c_str());
  std::error_code ec;
  std::filesystem::remove(std::filesystem::path(path_).parent_path(), ec);  // only if empty
}

}  // namespace tv
