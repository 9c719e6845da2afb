// The HTTP client is the embedded plugin, loaded on the first request; its
// failures come back in plain words.
#include "sinks/http_client.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace tv::http_client_test {
namespace {

TEST(HttpOrigin, BracketsAnIpv6Address) {
  EXPECT_EQ(HttpOrigin("127.0.0.1", 9091, false), "http://127.0.0.1:9091");
  EXPECT_EQ(HttpOrigin("::1", 443, true), "https://[::1]:443");
  EXPECT_EQ(HttpOrigin("hooks.example.com", 8443, true), "https://hooks.example.com:8443");
}

// A port on loopback that nothing listens on: bound, then closed.
int ClosedPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
  ::close(fd);
  return ntohs(a.sin_port);
}

TEST(HttpRequest, AConnectionRefusedIsSaidInPlainWords) {
  HttpCall call;
  call.host = "127.0.0.1";
  call.port = ClosedPort();
  call.body = "{}";
  HttpReply reply = HttpRequest(call);
  EXPECT_EQ(reply.status, 0);
  EXPECT_EQ(reply.error,
            "cannot connect to 127.0.0.1:" + std::to_string(call.port) + ": Connection refused");
  EXPECT_FALSE(reply.tls_refused);
}

}  // namespace
}  // namespace tv::http_client_test
