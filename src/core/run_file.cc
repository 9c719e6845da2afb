#include "core/run_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

namespace tv {
namespace {

constexpr size_t kChunkBytes = size_t{1} << 20;

// One read(2), retried on EINTR: bytes read, 0 at the end, -1 on an error.
ssize_t ReadSome(int fd, char* to, size_t n) {
  for (;;) {
    ssize_t got = ::read(fd, to, n);
    if (got >= 0 || errno != EINTR) return got;
  }
}

template <typename Json>
Status ReadDocument(const std::string& path, Json* out, std::string_view name) {
  if (name.empty()) name = path;
  std::string text;
  Status s = ReadRegularFile(path, kMaxJsonDocumentBytes, &text);
  if (!s.ok()) {
    // Messages name the file as the caller shows it.
    if (name != path && s.message().starts_with(path)) {
      std::string message = std::string(name) + s.message().substr(path.size());
      if (s.code() == Status::Code::kNotFound) return Status::NotFound(std::move(message));
      if (s.code() == Status::Code::kPermissionDenied)
        return Status::PermissionDenied(std::move(message));
      if (s.code() == Status::Code::kInvalid) return Status::Invalid(std::move(message));
      return Status::IoError(std::move(message));
    }
    return s;
  }
  if (JsonNestedDeeperThan(text, kMaxJsonDepth)) {
    return Status::Invalid(fmt::format("{} is nested deeper than {} levels", name, kMaxJsonDepth));
  }
  *out = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (out->is_discarded()) return Status::Invalid(fmt::format("{} is not JSON", name));
  return Status::Ok();
}

}  // namespace

std::string LimitText(size_t bytes) {
  if (bytes >= (size_t{1} << 20) && bytes % (size_t{1} << 20) == 0) {
    return fmt::format("{} MiB", bytes >> 20);
  }
  if (bytes >= 1024 && bytes % 1024 == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} bytes", bytes);
}

std::string_view FileKindName(unsigned mode) {
  switch (mode & S_IFMT) {
    case S_IFREG:
      return "a regular file";
    case S_IFIFO:
      return "a FIFO";
    case S_IFDIR:
      return "a directory";
    case S_IFCHR:
      return "a character device";
    case S_IFBLK:
      return "a block device";
    case S_IFSOCK:
      return "a socket";
    case S_IFLNK:
      return "a symbolic link";
  }
  return "not a regular file";
}

Status OpenRegularFile(const std::string& path, int* fd) {
  // A symbolic link is followed only to a file its own owner owns (or when
  // the link is root's or the caller's), as fs.protected_symlinks does in
  // sticky directories: a link another user planted in a run directory cannot
  // make root read a file that user could not.
  int f = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
  std::optional<uid_t> link_owner;
  if (f < 0 && errno == ELOOP) {
    struct stat link;
    if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) link_owner = link.st_uid;
    f = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  }
  if (f < 0) {
    int err = errno;
    struct stat st;
    if (err == ENXIO && ::stat(path.c_str(), &st) == 0) {  // a socket
      return Status::Invalid(
          fmt::format("{} is {}, not a regular file", path, FileKindName(st.st_mode)));
    }
    return ErrnoStatus(path, err);
  }
  struct stat st;
  if (::fstat(f, &st) != 0) {
    int err = errno;
    ::close(f);
    return ErrnoStatus(path, err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(f);
    return Status::Invalid(
        fmt::format("{} is {}, not a regular file", path, FileKindName(st.st_mode)));
  }
  if (link_owner && *link_owner != 0 && *link_owner != ::geteuid() && *link_owner != st.st_uid) {
    ::close(f);
    return Status::Invalid(
        fmt::format("{} is a symbolic link of uid {} to a file of uid {}: not followed", path,
                    *link_owner, st.st_uid));
  }
  *fd = f;
  return Status::Ok();
}

Status ReadRegularFile(const std::string& path, size_t max_bytes, std::string* out) {
  int fd = -1;
  if (Status s = OpenRegularFile(path, &fd); !s.ok()) return s;
  out->clear();
  Status result;
  char chunk[65536];
  for (;;) {
    ssize_t got = ReadSome(fd, chunk, sizeof(chunk));
    if (got < 0) {
      result = ErrnoStatus(path, errno);
      break;
    }
    if (got == 0) break;
    if (out->size() + static_cast<size_t>(got) > max_bytes) {
      result = Status::Invalid(fmt::format("{} is larger than {}", path, LimitText(max_bytes)));
      break;
    }
    out->append(chunk, static_cast<size_t>(got));
  }
  ::close(fd);
  if (!result.ok()) out->clear();
  return result;
}

bool JsonNestedDeeperThan(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '[':
      case '{':
        if (++depth > max_depth) return true;
        break;
      case ']':
      case '}':
        depth = std::max(0, depth - 1);
        break;
      default:
        break;
    }
  }
  return false;
}

Status ReadJsonDocument(const std::string& path, nlohmann::json* out, std::string_view name) {
  return ReadDocument(path, out, name);
}

Status ReadJsonDocument(const std::string& path, nlohmann::ordered_json* out,
                        std::string_view name) {
  return ReadDocument(path, out, name);
}

bool ParseJsonLine(std::string_view line, nlohmann::json* out, std::string* why) {
  if (JsonNestedDeeperThan(line, kMaxJsonDepth)) {
    *why = fmt::format("nested deeper than {} levels", kMaxJsonDepth);
    return false;
  }
  *out = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (out->is_discarded()) {
    *why = "not JSON";
    return false;
  }
  return true;
}

JsonlReader::JsonlReader(size_t max_line_bytes, size_t padding)
    : max_line_(max_line_bytes), padding_(padding) {}

JsonlReader::~JsonlReader() {
  if (fd_ >= 0) ::close(fd_);
}

Status JsonlReader::Open(const std::string& path) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  path_ = path;
  status_ = OpenRegularFile(path, &fd_);
  return status_;
}

void JsonlReader::OpenText(std::string_view text) {
  text_ = text;
  from_text_ = true;
}

bool JsonlReader::Fill() {
  if (eof_) return false;
  // Keep the unread bytes at the front; the buffer never holds more than a
  // line at the cap, a chunk and the padding.
  if (begin_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (buffer_.size() < end_ + kChunkBytes + padding_) buffer_.resize(end_ + kChunkBytes + padding_);
  size_t got = 0;
  if (from_text_) {
    got = std::min(kChunkBytes, text_.size());
    std::memcpy(buffer_.data() + end_, text_.data(), got);
    text_.remove_prefix(got);
  } else if (fd_ >= 0) {
    ssize_t n = ReadSome(fd_, buffer_.data() + end_, kChunkBytes);
    if (n < 0) {
      status_ = ErrnoStatus(path_, errno);
      n = 0;
    }
    got = static_cast<size_t>(n);
  }
  end_ += got;
  std::memset(buffer_.data() + end_, 0, padding_);
  if (got == 0) eof_ = true;
  return got > 0;
}

void JsonlReader::SkipHole() {
  if (fd_ < 0) return;
  // A hole reads as zeros, never a newline: the line being skipped goes on
  // through it, so the next read starts at the next data (or the end).
  off_t at = ::lseek(fd_, 0, SEEK_CUR);
  if (at < 0) return;
  off_t data = ::lseek(fd_, at, SEEK_DATA);
  if (data < 0) {
    if (errno == ENXIO)
      ::lseek(fd_, 0, SEEK_END);  // only a hole to the end
    else
      ::lseek(fd_, at, SEEK_SET);
  }
}

bool JsonlReader::Next(Line* line) {
  for (;;) {
    const char* data = buffer_.data();
    const char* nl = begin_ < end_
                         ? static_cast<const char*>(std::memchr(data + begin_, '\n', end_ - begin_))
                         : nullptr;
    if (skipping_) {
      // Inside a line longer than the cap: drop bytes up to its newline.
      if (nl != nullptr) {
        begin_ = static_cast<size_t>(nl - data) + 1;
        skipping_ = false;
        ++number_;
      } else {
        begin_ = end_ = 0;
        SkipHole();
        if (!Fill()) {
          skipping_ = false;
          ++number_;
          return false;
        }
      }
      continue;
    }
    if (nl != nullptr) {
      size_t stop = static_cast<size_t>(nl - data);
      std::string_view text(data + begin_, stop - begin_);
      begin_ = stop + 1;
      ++number_;
      if (text.size() > max_line_) {
        if (long_lines_++ == 0) first_long_line_ = number_;
        continue;
      }
      if (text.empty()) continue;
      *line = Line{text, number_, false};
      return true;
    }
    if (end_ - begin_ > max_line_) {
      if (long_lines_++ == 0) first_long_line_ = number_ + 1;
      skipping_ = true;
      begin_ = end_ = 0;
      continue;
    }
    if (!Fill()) {
      if (begin_ >= end_) return false;
      std::string_view text(buffer_.data() + begin_, end_ - begin_);
      begin_ = end_;
      ++number_;
      *line = Line{text, number_, true};
      return true;
    }
  }
}

std::string LongLinesNote(const JsonlReader& reader, std::string_view path) {
  if (reader.long_lines() == 0) return "";
  return fmt::format("skipped {} line{} longer than {} in {} ({}line {})", reader.long_lines(),
                     reader.long_lines() == 1 ? "" : "s", LimitText(reader.max_line_bytes()), path,
                     reader.long_lines() == 1 ? "" : "the first: ", reader.first_long_line());
}

}  // namespace tv
