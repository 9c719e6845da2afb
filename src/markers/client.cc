#include "markers/client.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "markers/risk.h"

namespace tv {

int RankFromEnvironment() {
  for (const char* name : {"RANK", "PADDLE_TRAINER_ID"}) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') continue;
    int rank = -1;
    auto [end, ec] = std::from_chars(v, v + std::strlen(v), rank);
    if (ec == std::errc() && *end == '\0' && rank >= 0) return rank;
  }
  return -1;
}

MarkerClient::MarkerClient(const std::string& socket_path, int rank, std::string framework)
    : socket_path_(socket_path),
      pid_(static_cast<int>(::getpid())),
      rank_(rank >= 0 ? rank : RankFromEnvironment()),
      framework_(std::move(framework)) {
  sockaddr_un addr{};
  if (socket_path.empty() || socket_path.size() >= sizeof(addr.sun_path)) {
    error_ = fmt::format("marker socket path '{}' is empty or too long", socket_path);
    return;
  }
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, socket_path.data(), socket_path.size());
  int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    error_ = fmt::format("socket: {}", std::strerror(errno));
    return;
  }
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    error_ =
        fmt::format("cannot reach the marker socket {}: {}", socket_path, std::strerror(errno));
    ::close(fd);
    return;
  }
  fd_ = fd;
  ClaimSlot(StepsPathFor(socket_path));
  Marker hello;
  hello.type = MarkerType::kHello;
  hello.framework = framework_;
  Send(std::move(hello));
}

MarkerClient::~MarkerClient() { Close(); }

void MarkerClient::ClaimSlot(const std::string& steps_path) {
  int fd = ::open(steps_path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    error_ = fmt::format("cannot open the steps file {}: {}", steps_path, std::strerror(errno));
    return;
  }
  struct stat st {};
  void* map = MAP_FAILED;
  if (::fstat(fd, &st) == 0 && static_cast<size_t>(st.st_size) >= kStepsFileSize) {
    map = ::mmap(nullptr, kStepsFileSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  ::close(fd);
  if (map == MAP_FAILED) {
    error_ = fmt::format("cannot map the steps file {}", steps_path);
    return;
  }
  const auto* header = static_cast<const StepsHeader*>(map);
  if (std::memcmp(header->magic, "TVSTEPS1", 8) != 0 || header->slots > kStepSlots ||
      header->slot_size != sizeof(StepSlot)) {
    error_ = fmt::format("the steps file {} is not one this version knows", steps_path);
    ::munmap(map, kStepsFileSize);
    return;
  }
  if (header->interval_ms > 0) interval_ns_ = uint64_t{header->interval_ms} * 1'000'000;
  StepSlot* slots = SlotsOf(map);
  for (uint32_t i = 0; i < header->slots; ++i) {
    uint32_t expected = 0;
    if (slots[i].pid.compare_exchange_strong(expected, static_cast<uint32_t>(pid_))) {
      slots[i].rank.store(rank_, std::memory_order_relaxed);
      slots[i].step.store(-1, std::memory_order_relaxed);
      slots[i].steps.store(0, std::memory_order_relaxed);
      slots[i].wait_ns.store(0, std::memory_order_relaxed);
      slots[i].wait_start_ns.store(0, std::memory_order_relaxed);
      slots[i].wait_flags.store(0, std::memory_order_relaxed);
      request_seen_ = slots[i].request_seq.load(std::memory_order_relaxed);
      slots[i].mono_ns.store(NowNs(), std::memory_order_release);
      map_ = map;
      slot_ = &slots[i];
      slot_index_ = static_cast<int>(i);
      return;
    }
  }
  error_ = fmt::format("all {} step slots are taken; steps are not counted", header->slots);
  ::munmap(map, kStepsFileSize);
}

uint64_t MarkerClient::NowNs() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(ts.tv_nsec);
}

bool MarkerClient::Send(Marker m) {
  if (fd_ < 0) return false;
  m.pid = pid_;
  m.rank = rank_;
  m.slot = slot_index_;
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  m.t = static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  std::string datagram = EncodeMarker(m);
  if (::send(fd_, datagram.data(), datagram.size(), MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
    ++dropped_;
    return false;
  }
  ++sent_;
  return true;
}

bool MarkerClient::EpochBegin(int64_t epoch, int64_t call, int64_t planned_epochs) {
  WaitPause();
  epoch_begin_steps_ = steps_;
  epoch_wait_ns_ = wait_ns_;
  epoch_timed_ns_ = timed_ns_;
  last_epoch_ns_ = NowNs();
  if (epochs_begun_++ == 0) first_epoch_ns_ = last_epoch_ns_;
  Marker m;
  m.type = MarkerType::kEpochBegin;
  m.epoch = epoch;
  // The count so far: an epoch the process never ends is counted from here to its bye.
  m.steps = static_cast<int64_t>(steps_);
  if (call > 0) m.call = call;
  if (planned_epochs > 0) m.planned_epochs = planned_epochs;
  return Send(std::move(m));
}

std::optional<MemoryRisk> MarkerClient::TakeRisk() {
  if (slot_ == nullptr) return std::nullopt;
  uint32_t signalled = slot_->risk_seq.load(std::memory_order_acquire);
  if (signalled == risk_seen_) return std::nullopt;
  uint32_t seq = 0;
  std::optional<MemoryRisk> risk = ReadRisk(static_cast<const StepsHeader*>(map_)->risk, &seq);
  if (!risk) return std::nullopt;
  // The record may be newer than the slot's word (a second risk between the
  // two reads): the slot will then say the same number, which is not news.
  risk_seen_ = seq;
  return risk;
}

std::string MarkerClient::TakeRequest() {
  if (slot_ == nullptr) return "";
  uint32_t signalled = slot_->request_seq.load(std::memory_order_acquire);
  if (signalled == request_seen_) return "";
  request_seen_ = signalled;  // read once, even when the file cannot be
  std::string text;
  int fd = ::open(RequestPathFor(socket_path_).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return "";
  char buffer[4096];
  ssize_t n = ::read(fd, buffer, sizeof(buffer));
  ::close(fd);
  if (n > 0) text.assign(buffer, static_cast<size_t>(n));
  return text;
}

bool MarkerClient::Profiled(std::string reason, std::string id, std::string dir, int64_t steps,
                            double seconds) {
  Marker m;
  m.type = MarkerType::kProfile;
  m.reason = std::move(reason);
  m.id = std::move(id);
  m.dir = std::move(dir);
  m.steps = steps;
  m.seconds = seconds;
  return Send(std::move(m));
}

std::optional<double> MarkerClient::seconds_per_epoch() const {
  if (epochs_begun_ < 2 || last_epoch_ns_ <= first_epoch_ns_) return std::nullopt;
  return static_cast<double>(last_epoch_ns_ - first_epoch_ns_) * 1e-9 /
         static_cast<double>(epochs_begun_ - 1);
}

bool MarkerClient::EpochEnd(int64_t epoch) {
  WaitPause();
  Marker m;
  m.type = MarkerType::kEpochEnd;
  m.epoch = epoch;
  m.steps = static_cast<int64_t>(steps_ - epoch_begin_steps_);
  if (timed_ns_ > epoch_timed_ns_) {
    // A wait added whole (WaitAdd) may have begun before the loop did: the
    // epoch's wait is at most its time in the loop.
    uint64_t timed = timed_ns_ - epoch_timed_ns_;
    m.wait_s = static_cast<double>(std::min(wait_ns_ - epoch_wait_ns_, timed)) * 1e-9;
    m.timed_s = static_cast<double>(timed) * 1e-9;
  }
  return Send(std::move(m));
}

bool MarkerClient::PhaseBegin(std::string phase) {
  WaitPause();
  Marker m;
  m.type = MarkerType::kPhaseBegin;
  m.phase = std::move(phase);
  return Send(std::move(m));
}

bool MarkerClient::PhaseEnd(std::string phase) {
  WaitPause();
  Marker m;
  m.type = MarkerType::kPhaseEnd;
  m.phase = std::move(phase);
  return Send(std::move(m));
}

bool MarkerClient::TensorboardLogDir(std::string log_dir) {
  Marker m;
  m.type = MarkerType::kTensorboardLogDir;
  m.log_dir = std::move(log_dir);
  return Send(std::move(m));
}

bool MarkerClient::Scalars(std::vector<std::pair<std::string, double>> values) {
  Marker m;
  m.type = MarkerType::kScalars;
  m.scalars = std::move(values);
  return Send(std::move(m));
}

bool MarkerClient::Allocator(std::vector<AllocatorFigures> devices) {
  Marker m;
  m.type = MarkerType::kAllocator;
  m.allocator = std::move(devices);
  return Send(std::move(m));
}

void MarkerClient::Close(std::string exception, std::string message) {
  // A forked child (a DataLoader worker) inherits the client but is not the one that said hello.
  // The slot stays claimed: the sampler keeps the last count the process reached.
  bool owner = static_cast<int>(::getpid()) == pid_;
  if (fd_ >= 0 && owner) {
    Marker bye;
    bye.type = MarkerType::kBye;
    bye.steps = static_cast<int64_t>(steps_);
    bye.exception = std::move(exception);
    bye.message = std::move(message);
    Send(std::move(bye));
  }
  if (map_ != nullptr) ::munmap(map_, kStepsFileSize);
  if (fd_ >= 0) ::close(fd_);
  map_ = nullptr;
  slot_ = nullptr;
  fd_ = -1;
}

int MarkerClient::FreeStacksSignal() {
  for (int sig = kStacksSignalMin + 6; sig <= kStacksSignalMax - 4; ++sig) {
    struct sigaction now {};
    if (::sigaction(sig, nullptr, &now) == 0 && now.sa_handler == SIG_DFL &&
        (now.sa_flags & SA_SIGINFO) == 0) {
      return sig;
    }
  }
  return 0;
}

bool MarkerClient::OfferStacks(int signal) {
  if (signal < kStacksSignalMin || signal > kStacksSignalMax) return false;
  struct sigaction now {};
  if (::sigaction(signal, nullptr, &now) != 0 || now.sa_handler == SIG_DFL ||
      now.sa_handler == SIG_IGN) {
    return false;  // nothing would catch it: never offered
  }
  // A training thread in read(2) or a futex when the stacks are asked for
  // carries on instead of seeing EINTR.
  now.sa_flags |= SA_RESTART;
  ::sigaction(signal, &now, nullptr);
  Marker m;
  m.type = MarkerType::kStacks;
  m.signal = signal;
  return Send(std::move(m));
}

bool SendMarker(const std::string& socket_path, const Marker& m, std::string* error) {
  sockaddr_un addr{};
  if (socket_path.empty() || socket_path.size() >= sizeof(addr.sun_path)) {
    *error = fmt::format("marker socket path '{}' is empty or too long", socket_path);
    return false;
  }
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, socket_path.data(), socket_path.size());
  int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = fmt::format("socket: {}", std::strerror(errno));
    return false;
  }
  std::string datagram = EncodeMarker(m);
  bool sent = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
              ::send(fd, datagram.data(), datagram.size(), MSG_NOSIGNAL) ==
                  static_cast<ssize_t>(datagram.size());
  if (!sent) *error = fmt::format("cannot reach {}: {}", socket_path, std::strerror(errno));
  ::close(fd);
  return sent;
}

}  // namespace tv
