#include "run/proc_locks.h"

#include <charconv>
#include <fstream>
#include <sstream>

namespace tv {
namespace {

// The next word of `line` from `*pos` (spaces skipped); empty at the end.
std::string_view NextWord(std::string_view line, size_t* pos) {
  size_t start = line.find_first_not_of(" \t", *pos);
  if (start == std::string_view::npos) {
    *pos = line.size();
    return {};
  }
  size_t end = line.find_first_of(" \t", start);
  if (end == std::string_view::npos) end = line.size();
  *pos = end;
  return line.substr(start, end - start);
}

template <typename T>
bool ParseWhole(std::string_view text, T* out, int base = 10) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out, base);
  return ec == std::errc() && end == text.data() + text.size();
}

std::optional<ProcLock> ParseLine(std::string_view line) {
  size_t pos = 0;
  std::string_view id = NextWord(line, &pos);
  if (id.size() < 2 || id.back() != ':') return std::nullopt;
  ProcLock lock;
  std::string_view word = NextWord(line, &pos);
  if (word == "->") {
    lock.waiting = true;
    word = NextWord(line, &pos);
  }
  if (word.empty()) return std::nullopt;
  lock.type = std::string(word);
  if (NextWord(line, &pos).empty()) return std::nullopt;  // ADVISORY, MANDATORY, ...
  std::string_view access = NextWord(line, &pos);
  if (access != "WRITE" && access != "READ") return std::nullopt;
  lock.write = access == "WRITE";
  if (!ParseWhole(NextWord(line, &pos), &lock.pid)) return std::nullopt;
  std::string_view file = NextWord(line, &pos);
  size_t first = file.find(':');
  size_t second = first == std::string_view::npos ? first : file.find(':', first + 1);
  if (second == std::string_view::npos) return std::nullopt;
  if (!ParseWhole(file.substr(0, first), &lock.major, 16) ||
      !ParseWhole(file.substr(first + 1, second - first - 1), &lock.minor, 16) ||
      !ParseWhole(file.substr(second + 1), &lock.inode)) {
    return std::nullopt;
  }
  return lock;
}

}  // namespace

std::vector<ProcLock> ParseProcLocks(std::string_view text) {
  std::vector<ProcLock> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    if (std::optional<ProcLock> lock = ParseLine(text.substr(pos, end - pos))) {
      out.push_back(std::move(*lock));
    }
    pos = end + 1;
  }
  return out;
}

std::optional<int> FlockHolder(const std::vector<ProcLock>& locks, unsigned major, unsigned minor,
                               uint64_t inode) {
  std::optional<int> shared;
  for (const ProcLock& l : locks) {
    if (l.waiting || l.type != "FLOCK" || l.pid <= 0) continue;
    if (l.major != major || l.minor != minor || l.inode != inode) continue;
    if (l.write) return l.pid;
    if (!shared) shared = l.pid;
  }
  return shared;
}

std::string ReadProcLocks() {
  std::ifstream in("/proc/locks");
  std::ostringstream text;
  text << in.rdbuf();
  return in ? text.str() : std::string();
}

}  // namespace tv
