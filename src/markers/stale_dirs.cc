#include "markers/stale_dirs.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>

#include "core/process_gone.h"
#include "markers/protocol.h"

namespace tv {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kPrefix = "trainvitals-";
constexpr time_t kUnownedGraceSeconds = 60;

std::optional<int> OwnerPid(const fs::path& dir) {
  std::ifstream in(dir / kOwnerFileName);
  std::string text;
  if (!std::getline(in, text)) return std::nullopt;
  int pid = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), pid);
  if (ec != std::errc() || pid <= 0) return std::nullopt;
  return pid;
}

// True when a connection to the socket is refused or it is not there: no one
// listens.
bool NobodyListens(const fs::path& socket_path) {
  sockaddr_un addr{};
  std::string path = socket_path.string();
  if (path.size() >= sizeof(addr.sun_path)) return false;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  bool refused = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 &&
                 (errno == ECONNREFUSED || errno == ENOENT);
  ::close(fd);
  return refused;
}

// A pid means nothing in another PID namespace (another container or node
// sharing this /tmp): a directory whose owner seems gone is stale only when
// nothing listens on its socket either.
bool IsStale(const fs::path& dir, const struct stat& st) {
  if (auto owner = OwnerPid(dir)) {
    return ProcessGone(*owner) && NobodyListens(dir / kMarkerSocketName);
  }
  return std::time(nullptr) - st.st_mtime > kUnownedGraceSeconds &&
         NobodyListens(dir / kMarkerSocketName);
}

}  // namespace

int RemoveStaleMarkerDirs(const std::string& tmp_dir) {
  int removed = 0;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(tmp_dir, ec)) {
    std::string name = entry.path().filename().string();
    if (!name.starts_with(kPrefix) || name.size() != kPrefix.size() + 6) continue;
    struct stat st {};
    if (::lstat(entry.path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
        st.st_uid != ::getuid()) {
      continue;
    }
    if (!IsStale(entry.path(), st)) continue;
    for (const char* file : {kMarkerSocketName, kStepsFileName, kOwnerFileName, kRequestFileName}) {
      ::unlink((entry.path() / file).c_str());
    }
    RemoveStacksFiles(entry.path().string());
    if (::rmdir(entry.path().c_str()) == 0) ++removed;
  }
  return removed;
}

}  // namespace tv
