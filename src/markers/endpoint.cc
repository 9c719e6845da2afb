#include "markers/endpoint.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>

#include <fmt/format.h>

namespace tv {

std::unique_ptr<MarkerEndpoint> MarkerEndpoint::Create(double interval_s, std::string* error) {
  std::unique_ptr<MarkerEndpoint> e(new MarkerEndpoint());
  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl = fmt::format("{}/trainvitals-XXXXXX", tmp != nullptr && *tmp != '\0' ? tmp : "/tmp");
  if (::mkdtemp(tmpl.data()) == nullptr) {
    *error = fmt::format("cannot make a directory for the marker socket ({}): {}", tmpl,
                         std::strerror(errno));
    return nullptr;
  }
  e->dir_ = tmpl;
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
  e->fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (e->fd_ < 0 || ::bind(e->fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    *error = fmt::format("cannot bind the marker socket {}: {}", e->socket_path_, std::strerror(errno));
    return nullptr;
  }
  // Room for bursts (every rank ending an epoch at once) between two ticks.
  int bytes = 1 << 20;
  ::setsockopt(e->fd_, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
  e->buffer_.resize(kMaxDatagram);
  return e;
}

MarkerEndpoint::~MarkerEndpoint() {
  if (fd_ >= 0) ::close(fd_);
  if (map_ != nullptr) ::munmap(map_, kStepsFileSize);
  if (!socket_path_.empty()) ::unlink(socket_path_.c_str());
  if (!steps_path_.empty()) ::unlink(steps_path_.c_str());
  if (!dir_.empty()) ::rmdir(dir_.c_str());
}

bool MarkerEndpoint::Receive(std::string* out) {
  if (fd_ < 0) return false;
  ssize_t n = ::recv(fd_, buffer_.data(), buffer_.size(), MSG_DONTWAIT | MSG_TRUNC);
  if (n < 0) return false;
  size_t len = static_cast<size_t>(n) > buffer_.size() ? buffer_.size() : static_cast<size_t>(n);
  out->assign(buffer_.data(), len);
  return true;
}

}  // namespace tv
