#include "sources/pid_namespace.h"

#include <gtest/gtest.h>

namespace tv {
namespace {

TEST(NsPid, ParsesEveryNamespaceLevel) {
  EXPECT_EQ(ParseNsPids("Name:\tpython\nTgid:\t4242\nNSpid:\t4242\t17\t1\nPPid:\t1\n"),
            (std::vector<int>{4242, 17, 1}));
  EXPECT_EQ(ParseNsPids("NSpid:\t5\n"), (std::vector<int>{5}));
  EXPECT_TRUE(ParseNsPids("Name:\told kernel\nPid:\t5\n").empty());
}

TEST(PidMapper, MatchesDirectlyOrThroughNsPid) {
  MemEnv env;
  env.Set("/proc/900/status", "NSpid:\t900\t3\n");
  PidMapper m(&env);
  EXPECT_TRUE(m.InJob(5, {1, 5, 9}));
  EXPECT_TRUE(m.InJob(900, {3}));
  EXPECT_FALSE(m.InJob(901, {3}));  // no such process here: only its own number counts
  m.Retain({});
  env.Set("/proc/900/status", "NSpid:\t900\t4\n");  // PID reused
  EXPECT_FALSE(m.InJob(900, {3}));
}

}  // namespace
}  // namespace tv
