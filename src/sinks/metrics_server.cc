#include "sinks/metrics_server.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/config.h"
#include "core/thread.h"
#include "sinks/http_request.h"
#include "sinks/prom_text.h"

namespace tv {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::string_view kRootText = "trainvitals: metrics at /metrics\n";
constexpr std::string_view kEmptyOpenMetrics = "# EOF\n";

// Where a connection is: what it waits for decides its deadline and how soon
// it is closed to make room (lowest first).
enum class Phase { kIdle = 0, kHead = 1, kAnswer = 2 };

struct Conn {
  std::string in;                            // bytes of requests not yet answered
  std::string head;                          // the answer's status line and headers
  std::shared_ptr<const PromSnapshot> keep;  // holds `body` alive
  std::string_view body;                     // the answer's body (empty for HEAD)
  size_t sent = 0;                           // bytes of head, then body, written
  bool close_after = false;                  // close once the answer is written
  bool served = false;                       // answered a request already (kept alive)
  Clock::time_point since;                   // start of the current phase, or last progress
  bool Answering() const { return sent < head.size() + body.size(); }
  Phase phase() const {
    if (Answering()) return Phase::kAnswer;
    return in.empty() && served ? Phase::kIdle : Phase::kHead;
  }
};

int FileLimit() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return 1 << 20;
  return static_cast<int>(std::min<rlim_t>(r.rlim_cur, 1 << 20));
}

}  // namespace

// The event loop, run on the server's one thread; only the destructor's Stop
// comes from another thread (through the eventfd).
class MetricsServer::Loop {
 public:
  Loop(MetricsServer* server, const ServerLimits& limits) : server_(server), limits_(limits) {
    limits_.max_connections = std::max(1, std::min(limits_.max_connections, FileLimit() / 2));
  }
  ~Loop() {
    for (auto& [fd, conn] : conns_) ::close(fd);
    for (int fd : {listen_fd_, epoll_fd_, wake_fd_, spare_fd_}) {
      if (fd >= 0) ::close(fd);
    }
  }

  // Binds and listens; returns the port, or throws ConfigError.
  int Bind(const ListenAddress& address) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* found = nullptr;
    std::string port = std::to_string(address.port);
    int gai = ::getaddrinfo(address.host.c_str(), port.c_str(), &hints, &found);
    if (gai != 0) Fail(address, ::gai_strerror(gai));
    int err = 0;
    for (addrinfo* a = found; a != nullptr && listen_fd_ < 0; a = a->ai_next) {
      int fd =
          ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) {
        err = errno;
        continue;
      }
      // SO_REUSEADDR only: SO_REUSEPORT would let a second run bind a port in
      // use and share its scrapes silently.
      int yes = 1;
      ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
      if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
        err = errno;
        ::close(fd);
        continue;
      }
      listen_fd_ = fd;
    }
    ::freeaddrinfo(found);
    if (listen_fd_ < 0) Fail(address, err != 0 ? std::strerror(err) : "bind failed");
    sockaddr_storage bound{};
    socklen_t len = sizeof(bound);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &len);
    int bound_port = bound.ss_family == AF_INET6
                         ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                         : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
    wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (epoll_fd_ < 0 || wake_fd_ < 0) Fail(address, std::strerror(errno));
    Watch(listen_fd_, EPOLLIN, EPOLL_CTL_ADD);
    Watch(wake_fd_, EPOLLIN, EPOLL_CTL_ADD);
    return bound_port;
  }

  void Run() {
    std::vector<epoll_event> events(256);
    for (;;) {
      int n = ::epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), WaitMs());
      if (n < 0 && errno != EINTR) throw std::runtime_error(std::strerror(errno));
      for (int i = 0; i < n; ++i) {
        int fd = events[i].data.fd;
        if (fd == wake_fd_) return;
        if (fd == listen_fd_) {
          AcceptAll();
        } else {
          OnReady(fd, events[i].events);
        }
      }
      CloseExpired();
    }
  }

  void Stop() {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t w = ::write(wake_fd_, &one, sizeof(one));
  }

 private:
  [[noreturn]] static void Fail(const ListenAddress& address, const char* why) {
    throw ConfigError(
        fmt::format("--prometheus: cannot listen on {}:{}: {}", address.host, address.port, why));
  }

  void Watch(int fd, uint32_t events, int op) {
    epoll_event ev{};
    ev.events = events;
    ev.data.fd = fd;
    ::epoll_ctl(epoll_fd_, op, fd, &ev);
  }

  void Close(int fd) {
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
    ::close(fd);
    conns_.erase(fd);
  }

  Clock::duration Timeout(Phase phase) const {
    switch (phase) {
      case Phase::kIdle:
        return limits_.idle_timeout;
      case Phase::kHead:
        return limits_.header_timeout;
      case Phase::kAnswer:
        return limits_.write_timeout;
    }
    return limits_.header_timeout;
  }

  // Milliseconds until the nearest deadline (-1: no connection, wait for one).
  int WaitMs() const {
    if (conns_.empty()) return -1;
    Clock::time_point nearest = Clock::time_point::max();
    for (const auto& [fd, c] : conns_) nearest = std::min(nearest, c.since + Timeout(c.phase()));
    auto ms = std::chrono::ceil<std::chrono::milliseconds>(nearest - Clock::now()).count();
    return static_cast<int>(std::clamp<int64_t>(ms, 0, 60000));
  }

  void CloseExpired() {
    Clock::time_point now = Clock::now();
    std::vector<int> expired;
    for (const auto& [fd, c] : conns_) {
      if (now >= c.since + Timeout(c.phase())) expired.push_back(fd);
    }
    for (int fd : expired) Close(fd);
  }

  // Closes the connection that matters least: idle before waiting for a head
  // before being answered, the oldest first. False when there is none.
  bool EvictOne() {
    auto victim = conns_.end();
    for (auto it = conns_.begin(); it != conns_.end(); ++it) {
      if (victim == conns_.end()) {
        victim = it;
        continue;
      }
      Phase a = it->second.phase(), b = victim->second.phase();
      if (a < b || (a == b && it->second.since < victim->second.since)) victim = it;
    }
    if (victim == conns_.end()) return false;
    Close(victim->first);
    return true;
  }

  void AcceptAll() {
    for (;;) {
      int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if ((errno == EMFILE || errno == ENFILE) && (EvictOne() || ShedOne())) continue;
        return;  // EAGAIN, or nothing to make room with
      }
      if (static_cast<int>(conns_.size()) >= limits_.max_connections) EvictOne();
      int yes = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
      Conn& c = conns_[fd];
      c.since = Clock::now();
      Watch(fd, EPOLLIN, EPOLL_CTL_ADD);
    }
  }

  // Out of file descriptors with no connection to close: take the one waiting
  // in the queue with the spare descriptor and close it, so the listening
  // socket does not stay readable for ever.
  bool ShedOne() {
    if (spare_fd_ < 0) return false;
    ::close(spare_fd_);
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) ::close(fd);
    spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    return false;
  }

  void OnReady(int fd, uint32_t events) {
    auto it = conns_.find(fd);
    if (it == conns_.end()) return;
    Conn& c = it->second;
    if (c.Answering()) {
      if ((events & (EPOLLERR | EPOLLHUP)) != 0) {
        Close(fd);
        return;
      }
      if (!Write(fd, c)) return;
    } else if (!Read(fd, c)) {
      return;
    }
    Serve(fd);
  }

  // Reads what the peer sent; false when the connection was closed.
  bool Read(int fd, Conn& c) {
    char buf[16384];
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return true;
    if (n <= 0) {
      Close(fd);
      return false;
    }
    if (c.in.empty() && c.served) c.since = Clock::now();  // a new request's head begins
    c.in.append(buf, static_cast<size_t>(n));
    return true;
  }

  // Writes what it can of the answer; false when the connection was closed.
  bool Write(int fd, Conn& c) {
    while (c.Answering()) {
      iovec iov[2];
      int count = 0;
      if (c.sent < c.head.size()) {
        iov[count++] = {c.head.data() + c.sent, c.head.size() - c.sent};
      }
      size_t body_sent = c.sent > c.head.size() ? c.sent - c.head.size() : 0;
      if (body_sent < c.body.size()) {
        iov[count++] = {const_cast<char*>(c.body.data()) + body_sent, c.body.size() - body_sent};
      }
      msghdr msg{};
      msg.msg_iov = iov;
      msg.msg_iovlen = static_cast<size_t>(count);
      ssize_t n = ::sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        Watch(fd, EPOLLOUT, EPOLL_CTL_MOD);  // no reading until it is written
        return true;
      }
      if (n <= 0) {
        Close(fd);
        return false;
      }
      c.sent += static_cast<size_t>(n);
      c.since = Clock::now();  // progress
    }
    if (c.close_after) {
      ::shutdown(fd, SHUT_WR);
      Close(fd);
      return false;
    }
    c.head.clear();
    c.keep.reset();
    c.body = {};
    c.sent = 0;
    c.served = true;
    c.since = Clock::now();  // idle from now, or the next pipelined head begins
    Watch(fd, EPOLLIN, EPOLL_CTL_MOD);
    return true;
  }

  // Answers the requests whose heads are complete, one at a time.
  void Serve(int fd) {
    for (;;) {
      auto it = conns_.find(fd);
      if (it == conns_.end()) return;
      Conn& c = it->second;
      if (c.Answering() || c.in.empty()) return;
      HttpRequestHead req;
      size_t used = 0;
      HeadStatus status = ParseHttpRequestHead(c.in, limits_.max_head_bytes, &req, &used);
      if (status == HeadStatus::kIncomplete) return;
      if (status == HeadStatus::kComplete) {
        c.in.erase(0, used);
        Answer(req, &c);
      } else {
        c.in.clear();
        Respond(&c, status == HeadStatus::kBad ? 400 : 431, "text/plain", nullptr, "", false, true);
      }
      if (!Write(fd, c)) return;
    }
  }

  void Answer(const HttpRequestHead& req, Conn* c) {
    bool head_only = req.method == "HEAD";
    bool allowed = req.method == "GET" || head_only;
    bool close = !req.keep_alive || req.has_body;  // a body is never read: close after
    if (req.path != "/metrics" && req.path != "/") {
      Respond(c, 404, "text/plain", nullptr, "not found\n", head_only, close, req.minor_version);
    } else if (!allowed) {
      Respond(c, 405, "text/plain", nullptr, "method not allowed\n", false, close,
              req.minor_version);
    } else if (req.path == "/") {
      Respond(c, 200, "text/plain", nullptr, kRootText, head_only, close, req.minor_version);
    } else {
      std::shared_ptr<const PromSnapshot> snap = server_->Current();
      if (WantsOpenMetrics(req.accept)) {
        Respond(c, 200, kOpenMetricsContentType, snap,
                snap ? std::string_view(snap->openmetrics) : kEmptyOpenMetrics, head_only, close,
                req.minor_version);
      } else {
        Respond(c, 200, kPromTextContentType, snap, snap ? std::string_view(snap->text) : "",
                head_only, close, req.minor_version);
      }
    }
  }

  static void Respond(Conn* c, int code, std::string_view type,
                      std::shared_ptr<const PromSnapshot> keep, std::string_view body,
                      bool head_only, bool close, int minor_version = 1) {
    std::string_view reason = code == 200   ? "OK"
                              : code == 400 ? "Bad Request"
                              : code == 404 ? "Not Found"
                              : code == 405 ? "Method Not Allowed"
                                            : "Request Header Fields Too Large";
    c->head = fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n", code,
                          reason, type, body.size());
    if (code == 405) c->head += "Allow: GET, HEAD\r\n";
    if (close) {
      c->head += "Connection: close\r\n";
    } else if (minor_version == 0) {
      c->head += "Connection: keep-alive\r\n";
    }
    c->head += "\r\n";
    c->keep = std::move(keep);
    c->body = head_only ? std::string_view() : body;
    c->sent = 0;
    c->close_after = close;
    c->since = Clock::now();
  }

  MetricsServer* server_;
  ServerLimits limits_;
  int listen_fd_ = -1, epoll_fd_ = -1, wake_fd_ = -1, spare_fd_ = -1;
  std::unordered_map<int, Conn> conns_;
};

MetricsServer::MetricsServer(const ListenAddress& address, const ServerLimits& limits)
    : host_(address.host), loop_(std::make_unique<Loop>(this, limits)) {
  port_ = loop_->Bind(address);
  thread_ = StartThread("tv-http", "the Prometheus endpoint stops serving, monitoring goes on",
                        [this] { loop_->Run(); });
}

MetricsServer::~MetricsServer() {
  loop_->Stop();
  if (thread_.joinable()) thread_.join();
}

void MetricsServer::Publish(std::shared_ptr<const PromSnapshot> snapshot) {
  std::lock_guard<std::mutex> lock(mu_);
  snapshot_ = std::move(snapshot);
}

std::shared_ptr<const PromSnapshot> MetricsServer::Current() {
  std::lock_guard<std::mutex> lock(mu_);
  return snapshot_;
}

}  // namespace tv
