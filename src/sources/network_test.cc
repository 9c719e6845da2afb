#include "sources/network.h"

#include <gtest/gtest.h>

#include "sources/fixture.h"

namespace tv::network_test {
namespace {

using test_fixtures::Fixture;

TEST(NetDev, ParsesInterfacesAndSkipsHeaders) {
  std::string text = Fixture("proc/net_dev_t0");  // the parsed names point into it
  std::vector<NetDevStat> d = ParseNetDev(text);
  ASSERT_EQ(d.size(), 4u);
  EXPECT_EQ(d[0].name, "lo");
  EXPECT_EQ(d[1].name, "eth0");
  EXPECT_EQ(d[1].rx_bytes, 9876543210u);
  EXPECT_EQ(d[1].tx_bytes, 1234567890u);
  EXPECT_EQ(d[3].name, "docker0");
}

TEST(NetDev, AcceptsCounterGluedToTheColon) {
  std::vector<NetDevStat> d = ParseNetDev("eth0:123456 1 0 0 0 0 0 0 654321 1 0 0 0 0 0 0\n");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].rx_bytes, 123456u);
  EXPECT_EQ(d[0].tx_bytes, 654321u);
}

TEST(NetDev, SkipsShortGarbageAndNamelessLines) {
  std::vector<NetDevStat> d = ParseNetDev(
      "eth0: 1 2 3\n"
      "eth1: 1 2 3 4 5 6 7 8 x 10\n"
      ": 1 2 3 4 5 6 7 8 9\n"
      "garbage\n"
      "eth2: 18446744073709551615 0 0 0 0 0 0 0 18446744073709551615\n");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].name, "eth2");
  EXPECT_EQ(d[0].tx_bytes, UINT64_MAX);
}

Sample Row(NetworkSource* source, double t, std::vector<Notice>* notices) {
  Sample s;
  source->Read({.mono_s = t, .row_tick = true}, &s, notices);
  return s;
}

TEST(NetworkSource, SumsAllInterfacesButLoopbackOverTheRow) {
  MemEnv env;
  NetworkSource source(&env);
  std::vector<Notice> notices;
  env.Set("/proc/net/dev", Fixture("proc/net_dev_t0"));
  EXPECT_FALSE(Row(&source, 1.0, &notices).host.net_rx_bytes_per_second);
  env.Set("/proc/net/dev", Fixture("proc/net_dev_t1"));
  Sample s = Row(&source, 1.5, &notices);
  // eth0 +1000000 / +200000, wlan0 +10000 / +500 over 0.5 s; lo's traffic is left out.
  EXPECT_DOUBLE_EQ(*s.host.net_rx_bytes_per_second, 1010000.0 / 0.5);
  EXPECT_DOUBLE_EQ(*s.host.net_tx_bytes_per_second, 200500.0 / 0.5);
}

TEST(NetworkSource, CounterResetGivesNoNegativeRate) {
  MemEnv env;
  NetworkSource source(&env);
  std::vector<Notice> notices;
  env.Set("/proc/net/dev", "eth0: 4294967000 0 0 0 0 0 0 0 100 0\n");
  Row(&source, 1.0, &notices);
  env.Set("/proc/net/dev", "eth0: 200 0 0 0 0 0 0 0 150 0\n");  // 32-bit wrap
  Sample s = Row(&source, 2.0, &notices);
  EXPECT_FALSE(s.host.net_rx_bytes_per_second);
  env.Set("/proc/net/dev", "eth0: 300 0 0 0 0 0 0 0 250 0\n");
  s = Row(&source, 3.0, &notices);
  EXPECT_DOUBLE_EQ(*s.host.net_rx_bytes_per_second, 100.0);
  EXPECT_DOUBLE_EQ(*s.host.net_tx_bytes_per_second, 100.0);
}

TEST(NetworkSource, OnlyLoopbackGivesNoRate) {
  MemEnv env;
  NetworkSource source(&env);
  std::vector<Notice> notices;
  env.Set("/proc/net/dev", "lo: 1 0 0 0 0 0 0 0 1 0\n");
  Row(&source, 1.0, &notices);
  EXPECT_FALSE(Row(&source, 2.0, &notices).host.net_rx_bytes_per_second);
}

TEST(NetworkSource, IgnoresNonRowTicksAndNoticesMissingFileOnce) {
  MemEnv env;
  NetworkSource source(&env);
  std::vector<Notice> notices;
  Sample s;
  source.Read({.mono_s = 0.1, .row_tick = false}, &s, &notices);
  EXPECT_TRUE(notices.empty());
  Row(&source, 1.0, &notices);
  Row(&source, 2.0, &notices);
  EXPECT_EQ(notices.size(), 1u);
}

}  // namespace
}  // namespace tv::network_test
