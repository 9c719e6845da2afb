#include "views/summary.h"

#include <gtest/gtest.h>

#include "core/aggregator.h"

namespace tv {
namespace {

TEST(Summary, JsonAndTextHoldTheSameNumbers) {
  Aggregator agg;
  Sample s;
  s.job.cpu_cores = 0.5;
  s.job.memory_bytes = 100.0 * (1 << 20);
  s.host.memory_used_bytes = 2.0 * (1 << 30);
  s.host.memory_limit_bytes = 8.0 * (1 << 30);
  agg.Add(s);
  s.job.cpu_cores = 1.5;
  s.job.memory_bytes = 300.0 * (1 << 20);
  agg.Add(s);
  RunOutcome o;
  o.command = {"python", "train.py"};
  o.run_dir = "runs/x";
  o.start_t = 100;
  o.end_t = 112.5;
  o.exit_code = 0;
  auto j = BuildSummary(o, agg.Peek(112.5, 12.5));
  EXPECT_EQ(j["duration_s"], 12.5);
  EXPECT_EQ(j["job"]["cpu_cores"]["mean"], 1.0);
  EXPECT_EQ(j["job"]["cpu_cores"]["max"], 1.5);
  EXPECT_EQ(j["job"]["memory_bytes"]["max"], 300.0 * (1 << 20));
  std::string text = FormatSummary(j);
  EXPECT_NE(text.find("python train.py — exit code 0 after 12.5 s"), std::string::npos) << text;
  EXPECT_NE(text.find("job mean 1.00 cores, max 1.50"), std::string::npos) << text;
  EXPECT_NE(text.find("job peak 300 MiB"), std::string::npos) << text;
  EXPECT_NE(text.find("host peak 2.00 GiB of 8.00 GiB"), std::string::npos) << text;
}

TEST(Summary, SignalDeathIsSaid) {
  RunOutcome o;
  o.command = {"sh"};
  o.exit_code = 137;
  o.exit_signal = 9;
  auto text = FormatSummary(BuildSummary(o, Row{}));
  EXPECT_NE(text.find("killed by signal 9 (exit code 137)"), std::string::npos) << text;
}

}  // namespace
}  // namespace tv
