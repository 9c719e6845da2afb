#include "markers/endpoint.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "core/private_path.h"
#include "markers/stale_dirs.h"

namespace tv {

namespace {

// Where this user's marker directories go. Where TMPDIR does not say: in
// memory (MemoryRuntimeDir), as a run makes and removes four files there (on
// a disk's file system, 0.5 ms of every start). Else <tmp>/trainvitals-<uid>,
// so that the look for stale ones reads a few entries, not every one of a
// shared /tmp (2,000 entries took 1.1 ms here); directly in <tmp> where that
// name is not this user's private directory (another user made it first).
// Never where the socket's path would be too long for a socket address.
std::string MarkerParent() {
  auto fits = [](const std::string& parent) {
    return parent.size() + sizeof("/trainvitals-XXXXXX/") + sizeof(kMarkerSocketName) - 2 <
           sizeof(sockaddr_un{}.sun_path);
  };
  const char* tmp_env = std::getenv("TMPDIR");
  bool given = tmp_env != nullptr && *tmp_env != '\0';
  if (!given) {
    std::string memory = MemoryRuntimeDir();
    if (!memory.empty() && fits(memory) && PrivateDir(memory, /*create=*/true).ok()) return memory;
  }
  std::string tmp_dir = given ? tmp_env : "/tmp";
  std::string mine = fmt::format("{}/trainvitals-{}", tmp_dir, ::getuid());
  if (!fits(mine)) return tmp_dir;
  return PrivateDir(mine, /*create=*/true).ok() ? mine : tmp_dir;
}

}  // namespace

std::unique_ptr<MarkerEndpoint> MarkerEndpoint::Create(double interval_s, std::string* error) {
  std::unique_ptr<MarkerEndpoint> e(new MarkerEndpoint());
  std::string parent = MarkerParent();
  RemoveStaleMarkerDirs(parent);  // left by runs killed with SIGKILL
  std::string tmpl = fmt::format("{}/trainvitals-XXXXXX", parent);
  if (::mkdtemp(tmpl.data()) == nullptr) {
    *error = fmt::format("cannot make a directory for the marker socket ({}): {}", tmpl,
                         std::strerror(errno));
    return nullptr;
  }
  e->dir_ = tmpl;
  e->owner_path_ = e->dir_ + "/" + kOwnerFileName;
  if (FILE* owner = std::fopen(e->owner_path_.c_str(), "we")) {
    std::fprintf(owner, "%d\n", static_cast<int>(::getpid()));
    std::fclose(owner);
  }
  e->socket_path_ = e->dir_ + "/" + kMarkerSocketName;
  e->steps_path_ = e->dir_ + "/" + kStepsFileName;

  int fd = ::open(e->steps_path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(kStepsFileSize)) != 0) {
    *error = fmt::format("cannot make the steps file {}: {}", e->steps_path_, std::strerror(errno));
    if (fd >= 0) ::close(fd);
    return nullptr;
  }
  void* map = ::mmap(nullptr, kStepsFileSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) {
    *error = fmt::format("cannot map the steps file {}: {}", e->steps_path_, std::strerror(errno));
    return nullptr;
  }
  e->map_ = map;
  auto* header = new (map) StepsHeader{};
  std::memcpy(header->magic, "TVSTEPS1", 8);
  header->version = kMarkerProtocolVersion;
  header->slots = kStepSlots;
  header->slot_size = sizeof(StepSlot);
  header->interval_ms = static_cast<uint32_t>(std::lround(interval_s * 1000));
  for (uint32_t i = 0; i < kStepSlots; ++i) new (&SlotsOf(map)[i]) StepSlot{};

  sockaddr_un addr{};
  if (e->socket_path_.size() >= sizeof(addr.sun_path)) {
    *error = fmt::format("marker socket path {} is too long; set TMPDIR to a shorter directory",
                         e->socket_path_);
    return nullptr;
  }
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, e->socket_path_.data(), e->socket_path_.size());
  // SOCK_SEQPACKET: message boundaries like datagrams, but one connection per
  // training process, so a burst (every rank ending an epoch at once) queues in
  // that process's socket buffer instead of hitting the small per-socket
  // datagram queue limit (net.unix.max_dgram_qlen, often 10).
  e->fd_ = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (e->fd_ < 0 || ::bind(e->fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(e->fd_, SOMAXCONN) != 0) {
    *error = fmt::format("cannot listen on the marker socket {}: {}", e->socket_path_,
                         std::strerror(errno));
    return nullptr;
  }
  e->buffer_.resize(kMaxDatagram);
  return e;
}

MarkerEndpoint::~MarkerEndpoint() {
  for (const Client& c : clients_) ::close(c.fd);
  if (fd_ >= 0) ::close(fd_);
  if (map_ != nullptr) ::munmap(map_, kStepsFileSize);
  if (!socket_path_.empty()) ::unlink(socket_path_.c_str());
  if (!steps_path_.empty()) ::unlink(steps_path_.c_str());
  if (!owner_path_.empty()) ::unlink(owner_path_.c_str());
  if (!dir_.empty()) {
    ::unlink((dir_ + "/" + kRequestFileName).c_str());
    RemoveStacksFiles(dir_);
    ::rmdir(dir_.c_str());
  }
}

bool MarkerEndpoint::Receive(std::string* out, uint64_t* client) {
  if (fd_ < 0) return false;
  for (;;) {
    if (cursor_ == clients_.size()) {
      // Asked first: an accept4 that finds nobody waiting still makes (and
      // frees) a socket, several times the cost of this poll, at every tick.
      pollfd listening{.fd = fd_, .events = POLLIN, .revents = 0};
      int c = ::poll(&listening, 1, 0) == 1
                  ? ::accept4(fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC)
                  : -1;
      if (c < 0) {
        cursor_ = 0;  // every client is drained: next call starts over
        return false;
      }
      if (clients_.size() >= kMaxClients) {
        ::close(c);  // its sends fail; its step slot still counts
        ++refused_;
        continue;
      }
      clients_.push_back(Client{c, next_id_++});
    }
    const Client& c = clients_[cursor_];
    ssize_t n = ::recv(c.fd, buffer_.data(), buffer_.size(), MSG_DONTWAIT | MSG_TRUNC);
    if (n > 0) {
      size_t len = std::min(static_cast<size_t>(n), buffer_.size());  // longer: cut, then refused
      out->assign(buffer_.data(), len);
      if (client != nullptr) *client = c.id;
      return true;
    }
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      ::close(c.fd);  // hung up
      hung_up_.push_back(c.id);
      clients_.erase(clients_.begin() + static_cast<std::ptrdiff_t>(cursor_));
      continue;
    }
    ++cursor_;
  }
}

void MarkerEndpoint::TakeHangUps(std::vector<uint64_t>* out) {
  out->insert(out->end(), hung_up_.begin(), hung_up_.end());
  hung_up_.clear();
}

void MarkerEndpoint::FreeSlot(int index, uint32_t pid) {
  if (map_ == nullptr || index < 0 || index >= static_cast<int>(kStepSlots)) return;
  StepSlot& slot = SlotsOf(map_)[index];
  if (slot.pid.load(std::memory_order_acquire) != pid) return;
  slot.steps.store(0, std::memory_order_relaxed);
  slot.step.store(-1, std::memory_order_relaxed);
  slot.wait_ns.store(0, std::memory_order_relaxed);
  slot.wait_start_ns.store(0, std::memory_order_relaxed);
  slot.wait_flags.store(0, std::memory_order_relaxed);
  slot.request_seq.store(0, std::memory_order_relaxed);
  slot.risk_seq.store(0, std::memory_order_relaxed);
  slot.pid.compare_exchange_strong(pid, 0, std::memory_order_release);
}

void MarkerEndpoint::SignalRisk(int index, uint32_t seq) {
  if (map_ == nullptr || index < 0 || index >= static_cast<int>(kStepSlots)) return;
  SlotsOf(map_)[index].risk_seq.store(seq, std::memory_order_release);
}

void MarkerEndpoint::SignalRequest(int index, uint32_t seq) {
  if (map_ == nullptr || index < 0 || index >= static_cast<int>(kStepSlots)) return;
  SlotsOf(map_)[index].request_seq.store(seq, std::memory_order_release);
}

int MarkerEndpoint::PeerPid(uint64_t client) const {
  for (const Client& c : clients_) {
    if (c.id != client) continue;
    ucred cred{};
    socklen_t size = sizeof(cred);
    if (::getsockopt(c.fd, SOL_SOCKET, SO_PEERCRED, &cred, &size) == 0) return cred.pid;
  }
  return 0;
}

}  // namespace tv
