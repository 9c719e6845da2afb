// The HTTP client is the embedded plugin, loaded on the first request; its
// failures come back in plain words.
#include "sinks/http_client.h"

#include <gtest/gtest.h>

#include "sinks/free_port_fixture.h"

namespace tv::http_client_test {
namespace {

TEST(HttpOrigin, BracketsAnIpv6Address) {
  EXPECT_EQ(HttpOrigin("127.0.0.1", 9091, false), "http://127.0.0.1:9091");
  EXPECT_EQ(HttpOrigin("::1", 443, true), "https://[::1]:443");
  EXPECT_EQ(HttpOrigin("hooks.example.com", 8443, true), "https://hooks.example.com:8443");
}

TEST(HttpRequest, AConnectionRefusedIsSaidInPlainWords) {
  HttpCall call;
  call.host = "127.0.0.1";
  call.port = testing::FreeLoopbackPort();  // nothing listens there
  call.body = "{}";
  HttpReply reply = HttpRequest(call);
  EXPECT_EQ(reply.status, 0);
  EXPECT_EQ(reply.error,
            "cannot connect to 127.0.0.1:" + std::to_string(call.port) + ": Connection refused");
  EXPECT_FALSE(reply.tls_refused);
}

}  // namespace
}  // namespace tv::http_client_test
