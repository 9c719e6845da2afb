#include "sources/pid_namespace.h"

#include <gtest/gtest.h>

namespace tv::pid_namespace_test {
namespace {

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
}  // namespace tv::pid_namespace_test
