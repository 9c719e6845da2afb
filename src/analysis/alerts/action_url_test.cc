#include "analysis/alerts/action_url.h"

#include <gtest/gtest.h>

namespace tv::action_url_test {
namespace {

TEST(CheckActionUrl, AcceptsHttpAndHttps) {
  for (std::string_view url :
       {"http://localhost:9093", "http://am", "https://hooks.slack.com/services/T/B/x",
        "http://[::1]:9093/prefix/", "http://10.0.0.1:8080/hook?token=abc"}) {
    EXPECT_EQ(CheckActionUrl(url), "") << url;
  }
}

TEST(CheckActionUrl, SaysWhatIsWrong) {
  EXPECT_EQ(CheckActionUrl("ftp://host"), "it must start with http:// or https://");
  EXPECT_EQ(CheckActionUrl("localhost:9093"), "it must start with http:// or https://");
  EXPECT_EQ(CheckActionUrl("http://"), "it has no host");
  EXPECT_EQ(CheckActionUrl("http://host:0"), "the port must be a number 1-65535");
  EXPECT_EQ(CheckActionUrl("http://host:99999"), "the port must be a number 1-65535");
  EXPECT_EQ(CheckActionUrl("http://host:x"), "the port must be a number 1-65535");
  EXPECT_EQ(CheckActionUrl("http://u:p@host"), "user:password@ is not supported");
  EXPECT_EQ(CheckActionUrl("http://ho st"), "it has a space in it");
  EXPECT_EQ(CheckActionUrl("http://::1:9093"), "an IPv6 address needs brackets: http://[::1]:9093");
}

TEST(ParseActionUrl, SplitsHostPortAndPath) {
  ActionUrl url;
  ASSERT_EQ(ParseActionUrl("http://[::1]:9093/prefix/?a=1#frag", &url), "");
  EXPECT_EQ(url.host, "::1");
  EXPECT_EQ(url.port, 9093);
  EXPECT_EQ(url.path, "/prefix/?a=1");
  EXPECT_EQ(url.origin, "http://[::1]:9093");
}

}  // namespace
}  // namespace tv::action_url_test
