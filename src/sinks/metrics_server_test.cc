#include "sinks/metrics_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <utility>
#include <vector>

#include "core/config.h"

namespace tv::metrics_server_test {
namespace {

// A blocking client socket with a receive timeout, so no test hangs.
class Client {
 public:
  explicit Client(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    timeval tv{5, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
  }
  ~Client() { ::close(fd_); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
  bool connected() const { return connected_; }

  void Send(std::string_view bytes) {
    ASSERT_EQ(::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }
  // Sends without judging: the server may have closed the connection already.
  void TrySend(std::string_view bytes) {
    (void)::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  }
  // One whole answer (head and Content-Length bytes of body), or what came
  // before the peer closed or 5 s passed.
  std::string Answer() {
    char buf[4096];
    for (;;) {
      size_t end = pending_.find("\r\n\r\n");
      if (end != std::string::npos) {
        size_t at = pending_.find("Content-Length: ");
        size_t length =
            at == std::string::npos || at > end ? 0 : std::stoul(pending_.substr(at + 16));
        if (pending_.size() >= end + 4 + length) {
          std::string one = pending_.substr(0, end + 4 + length);
          pending_.erase(0, one.size());
          return one;
        }
      }
      ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
      if (n <= 0) return std::exchange(pending_, "");
      pending_.append(buf, static_cast<size_t>(n));
    }
  }
  std::string Get(std::string_view path, std::string_view extra = "") {
    Send(std::string("GET ") + std::string(path) + " HTTP/1.1\r\nHost: x\r\n" + std::string(extra) +
         "\r\n");
    return Answer();
  }
  // Whether the server closed the connection (recv sees the end) within `ms`.
  bool ClosedWithin(int ms) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, ms) != 1) return false;
    char c;
    ssize_t n = ::recv(fd_, &c, 1, MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno == ECONNRESET);
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
  std::string pending_;  // received beyond the last answer
};

std::shared_ptr<const PromSnapshot> Snapshot() {
  auto s = std::make_shared<PromSnapshot>();
  s->text = "trainvitals_up 1\n";
  s->openmetrics = "trainvitals_up 1\n# EOF\n";
  return s;
}

TEST(MetricsServer, PicksAFreePortForPortZero) {
  MetricsServer server(ListenAddress{"127.0.0.1", 0});
  EXPECT_GT(server.port(), 0);
}

TEST(MetricsServer, PortInUseIsAConfigError) {
  MetricsServer first(ListenAddress{"127.0.0.1", 0});
  try {
    MetricsServer second(ListenAddress{"127.0.0.1", first.port()});
    FAIL() << "bound a port in use";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot listen on 127.0.0.1:"), std::string::npos)
        << e.what();
  }
}

TEST(MetricsServer, ServesBothFormatsOnOneKeptAliveConnection) {
  MetricsServer server(ListenAddress{"127.0.0.1", 0});
  Client c(server.port());
  ASSERT_TRUE(c.connected());
  std::string empty = c.Get("/metrics");
  EXPECT_TRUE(empty.starts_with("HTTP/1.1 200 OK\r\n")) << empty;
  EXPECT_TRUE(empty.ends_with("Content-Length: 0\r\n\r\n")) << empty;
  server.Publish(Snapshot());
  std::string text = c.Get("/metrics?x=1");
  EXPECT_NE(text.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"),
            std::string::npos)
      << text;
  EXPECT_TRUE(text.ends_with("\r\n\r\ntrainvitals_up 1\n")) << text;
  std::string om = c.Get("/metrics", "Accept: application/openmetrics-text; version=1.0.0\r\n");
  EXPECT_NE(om.find("Content-Type: application/openmetrics-text; version=1.0.0"), std::string::npos)
      << om;
  EXPECT_TRUE(om.ends_with("\r\n\r\ntrainvitals_up 1\n# EOF\n")) << om;
  EXPECT_TRUE(c.Get("/").ends_with("trainvitals: metrics at /metrics\n"));
  EXPECT_TRUE(c.Get("/nope").starts_with("HTTP/1.1 404 Not Found\r\n"));
  c.Send("DELETE /metrics HTTP/1.1\r\n\r\n");
  std::string refused = c.Answer();
  EXPECT_TRUE(refused.starts_with("HTTP/1.1 405 Method Not Allowed\r\n")) << refused;
  EXPECT_NE(refused.find("Allow: GET, HEAD\r\n"), std::string::npos) << refused;
  // Pipelined: both answered, in order.
  c.Send("GET / HTTP/1.1\r\n\r\nGET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n");
  EXPECT_TRUE(c.Answer().ends_with("at /metrics\n"));
  std::string last = c.Answer();
  EXPECT_NE(last.find("Connection: close\r\n"), std::string::npos) << last;
  EXPECT_TRUE(last.ends_with("trainvitals_up 1\n")) << last;
  EXPECT_TRUE(c.ClosedWithin(2000));
}

TEST(MetricsServer, GarbageAndHugeHeadsAreRefusedAndClosed) {
  MetricsServer server(ListenAddress{"127.0.0.1", 0});
  Client bad(server.port());
  bad.Send("\x16\x03\x01 hello\r\n\r\n");
  EXPECT_TRUE(bad.Answer().starts_with("HTTP/1.1 400 Bad Request\r\n"));
  EXPECT_TRUE(bad.ClosedWithin(2000));
  Client huge(server.port());
  huge.Send("GET /metrics HTTP/1.1\r\nX: " + std::string(9000, 'a'));
  EXPECT_TRUE(huge.Answer().starts_with("HTTP/1.1 431 "));
  EXPECT_TRUE(huge.ClosedWithin(2000));
}

TEST(MetricsServer, HeadNotCompleteInTimeIsClosed) {
  ServerLimits limits;
  limits.header_timeout = std::chrono::milliseconds(200);
  MetricsServer server(ListenAddress{"127.0.0.1", 0}, limits);
  Client stalled(server.port());
  stalled.Send("GET /metrics HTTP/1.1\r\n");  // one line, then nothing
  Client silent(server.port());               // connects, sends nothing
  Client trickle(server.port());
  trickle.Send("GET /metrics HTTP/1.1\r\n");
  for (int i = 0; i < 4; ++i) {  // a byte every 100 ms does not keep it open
    usleep(100000);
    trickle.TrySend("X");
  }
  EXPECT_TRUE(stalled.ClosedWithin(3000));
  EXPECT_TRUE(silent.ClosedWithin(3000));
  EXPECT_TRUE(trickle.ClosedWithin(3000));
  Client fine(server.port());
  EXPECT_TRUE(fine.Get("/").starts_with("HTTP/1.1 200 OK\r\n"));
}

TEST(MetricsServer, AtTheLimitTheOldestIdleConnectionIsClosedFirst) {
  ServerLimits limits;
  limits.max_connections = 4;
  MetricsServer server(ListenAddress{"127.0.0.1", 0}, limits);
  server.Publish(Snapshot());
  Client stalled(server.port());
  stalled.Send("GET /metrics HTTP/1.1\r\n");  // waits for its head: closed after the idle
  Client idle1(server.port()), idle2(server.port()), idle3(server.port());
  for (Client* c : {&idle1, &idle2, &idle3}) ASSERT_TRUE(c->Get("/").ends_with("/metrics\n"));
  Client fifth(server.port());
  EXPECT_TRUE(fifth.Get("/metrics").ends_with("trainvitals_up 1\n"));
  EXPECT_TRUE(idle1.ClosedWithin(2000));
  EXPECT_FALSE(idle2.ClosedWithin(0));
  EXPECT_FALSE(stalled.ClosedWithin(0));
  Client sixth(server.port());
  EXPECT_TRUE(sixth.Get("/metrics").ends_with("trainvitals_up 1\n"));
  EXPECT_TRUE(idle2.ClosedWithin(2000));
  EXPECT_FALSE(idle3.ClosedWithin(0));
  EXPECT_FALSE(stalled.ClosedWithin(0));
}

TEST(MetricsServer, ScrapesAreAnsweredWhile300ConnectionsIdleOrStall) {
  MetricsServer server(ListenAddress{"127.0.0.1", 0});
  server.Publish(Snapshot());
  std::vector<std::unique_ptr<Client>> crowd;
  for (int i = 0; i < 300; ++i) {
    crowd.push_back(std::make_unique<Client>(server.port()));
    ASSERT_TRUE(crowd.back()->connected());
  }
  for (int i = 0; i < 4; ++i) {
    crowd.push_back(std::make_unique<Client>(server.port()));
    crowd.back()->Send("GET /metrics HTTP/1.1\r\n");
  }
  for (int i = 0; i < 7; ++i) {
    Client scrape(server.port());
    EXPECT_TRUE(scrape.Get("/metrics").ends_with("trainvitals_up 1\n")) << "scrape " << i;
  }
  for (const auto& c : crowd) EXPECT_FALSE(c->ClosedWithin(0));  // nobody was turned away
}

}  // namespace
}  // namespace tv::metrics_server_test
