#include "markers/risk.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>

namespace tv::risk_test {
namespace {

MemoryRisk Forecast() {
  MemoryRisk r;
  r.kind = MemoryRisk::Kind::kOomForecast;
  r.gpu = 0;
  r.seconds_left = 3 * 3600 + 10 * 60;
  r.epoch = 23;
  r.planned_epochs = 50;
  r.growth_bytes_per_second = 82.0 * 1024 * 1024 / 600;  // 82 MiB per 10-minute epoch
  return r;
}

TEST(RiskRecord, ReadsBackWhatWasWrittenWithItsNumber) {
  auto header = std::make_unique<StepsHeader>();
  uint32_t seq = 99;
  EXPECT_FALSE(ReadRisk(header->risk, &seq)) << "a zero record is no risk";
  WriteRisk(Forecast(), 1, &header->risk);
  std::optional<MemoryRisk> r = ReadRisk(header->risk, &seq);
  ASSERT_TRUE(r);
  EXPECT_EQ(seq, 1u);
  EXPECT_EQ(r->kind, MemoryRisk::Kind::kOomForecast);
  EXPECT_EQ(r->gpu, 0);
  EXPECT_EQ(r->epoch, 23);
  EXPECT_EQ(r->planned_epochs, 50);
  EXPECT_DOUBLE_EQ(*r->seconds_left, 11400);
  EXPECT_DOUBLE_EQ(r->growth_bytes_per_second, 82.0 * 1024 * 1024 / 600);
  EXPECT_EQ(header->risk.lock.load() % 2, 0u) << "even: not being written";
}

TEST(RiskRecord, UnknownFiguresStayUnknown) {
  auto header = std::make_unique<StepsHeader>();
  MemoryRisk leak;
  leak.kind = MemoryRisk::Kind::kHostMemoryLeak;
  leak.gpu = -1;
  leak.growth_bytes_per_second = 8e6;
  leak.epoch = int64_t{1} << 40;  // past the record's 32 bits: not known rather than wrong
  WriteRisk(leak, 7, &header->risk);
  uint32_t seq = 0;
  std::optional<MemoryRisk> r = ReadRisk(header->risk, &seq);
  ASSERT_TRUE(r);
  EXPECT_EQ(seq, 7u);
  EXPECT_EQ(r->kind, MemoryRisk::Kind::kHostMemoryLeak);
  EXPECT_EQ(r->gpu, -1);
  EXPECT_FALSE(r->seconds_left);
  EXPECT_FALSE(r->epoch);
  EXPECT_FALSE(r->planned_epochs);
}

TEST(RiskRecord, ARecordBeingWrittenIsNotRead) {
  auto header = std::make_unique<StepsHeader>();
  WriteRisk(Forecast(), 1, &header->risk);
  header->risk.lock.fetch_add(1);  // a writer is in the middle of it
  uint32_t seq = 0;
  EXPECT_FALSE(ReadRisk(header->risk, &seq));
  header->risk.lock.fetch_add(1);
  EXPECT_TRUE(ReadRisk(header->risk, &seq));
}

TEST(RiskRecord, KindsAreTheFindingIds) {
  EXPECT_EQ(RiskKindId(MemoryRisk::Kind::kOomForecast), "oom-forecast");
  EXPECT_EQ(RiskKindId(MemoryRisk::Kind::kGpuMemoryLeak), "gpu-memory-leak");
  EXPECT_EQ(RiskKindId(MemoryRisk::Kind::kHostMemoryLeak), "host-memory-leak");
  EXPECT_EQ(RiskKindId(MemoryRisk::Kind::kAlertStop), "alert-stop");
}

TEST(RiskRecord, AnAlertsStopRequestRoundTrips) {
  auto header = std::make_unique<StepsHeader>();
  WriteRisk(Forecast(), 1, &header->risk);
  MemoryRisk stop;
  stop.kind = MemoryRisk::Kind::kAlertStop;
  WriteRisk(stop, 2, &header->risk);
  uint32_t seq = 0;
  std::optional<MemoryRisk> r = ReadRisk(header->risk, &seq);
  ASSERT_TRUE(r);
  EXPECT_EQ(seq, 2u);
  EXPECT_EQ(r->kind, MemoryRisk::Kind::kAlertStop);
  EXPECT_EQ(r->gpu, -1) << "the forecast's fields do not linger";
  EXPECT_FALSE(r->epoch);
  EXPECT_FALSE(r->seconds_left);
  EXPECT_EQ(header->risk.kind.load(), 4u) << "the wire number docs/markers.md gives";
  EXPECT_EQ(DescribeRisk(*r, 30.0), "an alert asks the training to stop");
}

TEST(RiskRecord, AKindFromANewerSupervisorIsNoRisk) {
  auto header = std::make_unique<StepsHeader>();
  WriteRisk(Forecast(), 1, &header->risk);
  header->risk.kind.store(5);
  uint32_t seq = 0;
  EXPECT_FALSE(ReadRisk(header->risk, &seq));
}

TEST(DescribeRisk, SaysTheGrowthPerEpochAndWhenItRunsOut) {
  EXPECT_EQ(DescribeRisk(Forecast(), 600.0),
            "GPU 0 memory grows 82 MiB/epoch: it runs out at epoch 23 of 50, in about 3 h 10 min");
  MemoryRisk r = Forecast();
  r.planned_epochs.reset();
  r.growth_bytes_per_second = 8.0 * 1024 * 1024;
  r.seconds_left = 90;
  EXPECT_EQ(DescribeRisk(r, std::nullopt),
            "GPU 0 memory grows 480 MiB/min: it runs out at epoch 23, in about 2 min");
  MemoryRisk host;
  host.kind = MemoryRisk::Kind::kHostMemoryLeak;
  host.growth_bytes_per_second = 2.5 * 1024;
  EXPECT_EQ(DescribeRisk(host, std::nullopt), "host memory grows 150 KiB/min");
  host.seconds_left = 2 * 86400 + 4 * 3600 + 59;
  EXPECT_EQ(DescribeRisk(host, 30.0),
            "host memory grows 75 KiB/epoch: it runs out in about 2 d 4 h");
}

}  // namespace
}  // namespace tv::risk_test
