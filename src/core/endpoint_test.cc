#include "core/endpoint.h"

#include <gtest/gtest.h>

#include "core/config.h"

namespace tv::endpoint_test {
namespace {

TEST(ParseListenAddress, BarePortListensOnLoopbackOnly) {
  ListenAddress a = ParseListenAddress("--prometheus", "9400");
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 9400);
}

TEST(ParseListenAddress, EmptyHostMeansAllInterfaces) {
  ListenAddress a = ParseListenAddress("--prometheus", ":9400");
  EXPECT_EQ(a.host, "0.0.0.0");
  EXPECT_EQ(a.port, 9400);
}

TEST(ParseListenAddress, HostPortAndBracketedV6) {
  EXPECT_EQ(ParseListenAddress("--prometheus", "10.0.0.5:80").host, "10.0.0.5");
  ListenAddress v6 = ParseListenAddress("--prometheus", "[::1]:9400");
  EXPECT_EQ(v6.host, "::1");
  EXPECT_EQ(v6.port, 9400);
}

TEST(ParseListenAddress, RejectsMalformed) {
  for (const char* bad : {"", "abc", "70000", "-1", "host:", "host:x", "::1:80", "a b:80"}) {
    EXPECT_THROW(ParseListenAddress("--prometheus", bad), ConfigError) << bad;
  }
}

TEST(ParseHttpUrl, HostPortAndPath) {
  HttpUrl u = ParseHttpUrl("--pushgateway", "http://gw.local:9091/prefix/");
  EXPECT_EQ(u.host, "gw.local");
  EXPECT_EQ(u.port, 9091);
  EXPECT_EQ(u.path, "/prefix");
  HttpUrl d = ParseHttpUrl("--pushgateway", "http://gw");
  EXPECT_EQ(d.port, 80);
  EXPECT_EQ(d.path, "");
}

TEST(ParseHttpUrl, RejectsMalformed) {
  for (const char* bad : {"", "gw:9091", "https://gw", "http://", "http://gw:port", "http://gw:0",
                          "http://g w", "http://gw/?x=1"}) {
    EXPECT_THROW(ParseHttpUrl("--pushgateway", bad), ConfigError) << bad;
  }
}

TEST(IsLoopbackHost, OnlyThisMachinesAddresses) {
  EXPECT_TRUE(IsLoopbackHost("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackHost("127.1.2.3"));
  EXPECT_TRUE(IsLoopbackHost("::1"));
  EXPECT_TRUE(IsLoopbackHost("localhost"));
  EXPECT_FALSE(IsLoopbackHost("0.0.0.0"));
  EXPECT_FALSE(IsLoopbackHost("::"));
  EXPECT_FALSE(IsLoopbackHost("10.0.0.7"));
  EXPECT_FALSE(IsLoopbackHost("node-1"));
}

}  // namespace
}  // namespace tv::endpoint_test
