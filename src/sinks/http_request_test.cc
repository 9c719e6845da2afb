#include "sinks/http_request.h"

#include <gtest/gtest.h>

namespace tv::http_request_test {
namespace {

HeadStatus Parse(std::string_view bytes, HttpRequestHead* head, size_t* used = nullptr) {
  size_t n = 0;
  HeadStatus s = ParseHttpRequestHead(bytes, 8192, head, &n);
  if (used != nullptr) *used = n;
  return s;
}

TEST(HttpRequestHead, ParsesAGetWithItsHeaders) {
  HttpRequestHead h;
  size_t used = 0;
  std::string_view bytes =
      "GET /metrics?a=b HTTP/1.1\r\nHost: x\r\naccept: application/openmetrics-text\r\n\r\nGET";
  ASSERT_EQ(Parse(bytes, &h, &used), HeadStatus::kComplete);
  EXPECT_EQ(used, bytes.size() - 3);
  EXPECT_EQ(h.method, "GET");
  EXPECT_EQ(h.path, "/metrics");
  EXPECT_EQ(h.accept, "application/openmetrics-text");
  EXPECT_TRUE(h.keep_alive);
  EXPECT_FALSE(h.has_body);
}

TEST(HttpRequestHead, KeepAliveByVersionAndConnection) {
  HttpRequestHead h;
  ASSERT_EQ(Parse("GET / HTTP/1.1\nConnection: Keep-Alive, Close\n\n", &h), HeadStatus::kComplete);
  EXPECT_FALSE(h.keep_alive);
  ASSERT_EQ(Parse("GET / HTTP/1.0\r\n\r\n", &h), HeadStatus::kComplete);
  EXPECT_FALSE(h.keep_alive);
  ASSERT_EQ(Parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", &h), HeadStatus::kComplete);
  EXPECT_TRUE(h.keep_alive);
  ASSERT_EQ(Parse("POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc", &h), HeadStatus::kComplete);
  EXPECT_TRUE(h.has_body);
}

TEST(HttpRequestHead, IncompleteBadAndTooLarge) {
  HttpRequestHead h;
  EXPECT_EQ(Parse("GET /metrics HTTP/1.1\r\n", &h), HeadStatus::kIncomplete);
  EXPECT_EQ(Parse("", &h), HeadStatus::kIncomplete);
  EXPECT_EQ(Parse("GET /metrics\r\n\r\n", &h), HeadStatus::kBad);
  EXPECT_EQ(Parse("GET /metrics HTTP/2.0\r\n\r\n", &h), HeadStatus::kBad);
  EXPECT_EQ(Parse("GET / HTTP/1.1\r\nNo colon\r\n\r\n", &h), HeadStatus::kBad);
  EXPECT_EQ(Parse("G\x1b T / HTTP/1.1\r\n\r\n", &h), HeadStatus::kBad);
  size_t used = 0;
  EXPECT_EQ(ParseHttpRequestHead(std::string(100, 'a'), 64, &h, &used), HeadStatus::kTooLarge);
}

}  // namespace
}  // namespace tv::http_request_test
