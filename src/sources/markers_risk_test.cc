// The back-channel: memory risks the marker source publishes reach the
// training processes' clients through their step slots (docs/markers.md).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "markers/client.h"
#include "sources/markers_fixture.h"

namespace tv::markers_risk_test {
namespace {

using Fixture = MarkerSourceFixture;

MemoryRisk GpuLeak(double growth) {
  MemoryRisk r;
  r.kind = MemoryRisk::Kind::kGpuMemoryLeak;
  r.gpu = 1;
  r.seconds_left = 600;
  r.epoch = 40;
  r.planned_epochs = 60;
  r.growth_bytes_per_second = growth;
  return r;
}

TEST(MarkerBackChannel, ARiskReachesARunningClientOnce) {
  Fixture f;
  MarkerClient c(f.endpoint->socket_path(), -1, "test");
  ASSERT_TRUE(c.ok()) << c.error();
  c.Step(0);
  EXPECT_EQ(c.Step(1) & kStepRiskChanged, 0u);
  EXPECT_FALSE(c.TakeRisk());

  f.source->PublishRisk(GpuLeak(1e6));
  EXPECT_NE(c.Step(2) & kStepRiskChanged, 0u);
  EXPECT_TRUE(c.risk_changed());
  std::optional<MemoryRisk> r = c.TakeRisk();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kind, MemoryRisk::Kind::kGpuMemoryLeak);
  EXPECT_EQ(r->gpu, 1);
  EXPECT_EQ(r->epoch, 40);
  EXPECT_EQ(r->planned_epochs, 60);
  EXPECT_DOUBLE_EQ(*r->seconds_left, 600);
  EXPECT_DOUBLE_EQ(r->growth_bytes_per_second, 1e6);
  EXPECT_EQ(c.Step(3) & kStepRiskChanged, 0u) << "read: no longer news";
  EXPECT_FALSE(c.TakeRisk());
  f.Read(1.0);  // the tick's catch-up leaves a slot that has the latest alone
  EXPECT_EQ(c.Step(4) & kStepRiskChanged, 0u);

  MemoryRisk forecast = GpuLeak(2e6);
  forecast.kind = MemoryRisk::Kind::kOomForecast;
  f.source->PublishRisk(forecast);
  EXPECT_NE(c.Step(5) & kStepRiskChanged, 0u);
  r = c.TakeRisk();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kind, MemoryRisk::Kind::kOomForecast);
  EXPECT_DOUBLE_EQ(r->growth_bytes_per_second, 2e6);
}

TEST(MarkerBackChannel, AClientThatClaimsItsSlotLaterGetsTheLatestRisk) {
  Fixture f;
  f.source->PublishRisk(GpuLeak(1e6));
  f.source->PublishRisk(GpuLeak(3e6));
  MarkerClient late(f.endpoint->socket_path(), -1, "late");
  ASSERT_TRUE(late.ok()) << late.error();
  EXPECT_EQ(late.Step(0) & kStepRiskChanged, 0u) << "signalled at the sampler's next tick";
  f.Read(1.0);
  EXPECT_NE(late.Step(1) & kStepRiskChanged, 0u);
  std::optional<MemoryRisk> r = late.TakeRisk();
  ASSERT_TRUE(r);
  EXPECT_DOUBLE_EQ(r->growth_bytes_per_second, 3e6);  // the latest, not every one
  EXPECT_FALSE(late.TakeRisk());
}

TEST(MarkerBackChannel, AFreedSlotForgetsItsRiskAndItsNextOwnerIsTold) {
  Fixture f;
  int slot = -1;
  {
    MarkerClient first(f.endpoint->socket_path(), -1, "first");
    slot = first.slot();
    f.source->PublishRisk(GpuLeak(1e6));
    ASSERT_TRUE(first.TakeRisk());
  }  // bye: the sampler frees its slot at the next read
  f.Read(1.0);
  EXPECT_EQ(f.endpoint->slots()[slot].risk_seq.load(), 0u);
  MarkerClient next(f.endpoint->socket_path(), -1, "next");
  ASSERT_EQ(next.slot(), slot);
  f.Read(2.0);
  EXPECT_NE(next.Step(0) & kStepRiskChanged, 0u);
  EXPECT_TRUE(next.TakeRisk());
}

TEST(MarkerBackChannel, AnotherProcessReadsItThroughItsOwnMapping) {
  Fixture f;
  f.source->PublishRisk(GpuLeak(5e6));
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    MarkerClient c(f.endpoint->socket_path(), -1, "child");
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (int64_t i = 0; std::chrono::steady_clock::now() < deadline; ++i) {
      if (c.Step(i) & kStepRiskChanged) {
        std::optional<MemoryRisk> r = c.TakeRisk();
        ::_exit(r && r->growth_bytes_per_second == 5e6 && r->gpu == 1 ? 0 : 2);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ::_exit(3);
  }
  // The parent is the sampler: its ticks signal the child's slot once claimed.
  int status = 0;
  for (int tick = 0; tick < 2000 && ::waitpid(child, &status, WNOHANG) == 0; ++tick) {
    f.Read(1.0 + tick * 0.01);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!WIFEXITED(status)) ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(MarkerBackChannel, AnAlertsStopReachesEveryProcessOnce) {
  Fixture f;
  MarkerClient a(f.endpoint->socket_path(), -1, "a");
  MarkerClient b(f.endpoint->socket_path(), -1, "b");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(f.source->stop_requested_by(), "");
  f.source->RequestStop("steps-done");
  EXPECT_EQ(f.source->stop_requested_by(), "steps-done");
  for (MarkerClient* c : {&a, &b}) {
    EXPECT_NE(c->Step(1) & kStepRiskChanged, 0u);
    std::optional<MemoryRisk> r = c->TakeRisk();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->kind, MemoryRisk::Kind::kAlertStop);
    EXPECT_EQ(c->Step(2) & kStepRiskChanged, 0u);
  }
  f.source->RequestStop("another-rule");  // fires later: already asked
  EXPECT_EQ(a.Step(3) & kStepRiskChanged, 0u);
  EXPECT_EQ(f.source->stop_requested_by(), "steps-done");
}

TEST(MarkerBackChannel, ARiskAfterTheStopDoesNotHideIt) {
  Fixture f;
  MarkerClient slow(f.endpoint->socket_path(), -1, "slow");
  f.source->PublishRisk(GpuLeak(1e6));
  f.source->RequestStop("disk");
  f.source->PublishRisk(GpuLeak(2e6));  // the leak's forecast, in the same tick
  std::optional<MemoryRisk> r = slow.TakeRisk();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kind, MemoryRisk::Kind::kAlertStop);

  MarkerClient late(f.endpoint->socket_path(), -1, "late");  // a rank that starts later
  f.Read(1.0);
  EXPECT_NE(late.Step(0) & kStepRiskChanged, 0u);
  r = late.TakeRisk();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kind, MemoryRisk::Kind::kAlertStop);
}

TEST(MarkerBackChannel, EpochBeginCarriesThePlannedEpochsIntoTheEvent) {
  Fixture f;
  MarkerClient c(f.endpoint->socket_path(), -1, "test");
  c.EpochBegin(0, 1, 60);
  c.EpochBegin(1, 1);
  Sample s = f.Read(1.0);
  std::vector<const TrainingEvent*> begins;
  for (const TrainingEvent& e : s.training.events) {
    if (e.type == EventType::kEpochBegin) begins.push_back(&e);
  }
  ASSERT_EQ(begins.size(), 2u);
  EXPECT_EQ(begins[0]->planned_epochs, 60);
  EXPECT_FALSE(begins[1]->planned_epochs);
}

TEST(MarkerBackChannel, TheClientTimesItsEpochsForTheGrowthPerEpoch) {
  Fixture f;
  MarkerClient c(f.endpoint->socket_path(), -1, "test");
  EXPECT_FALSE(c.seconds_per_epoch());
  c.EpochBegin(0);
  EXPECT_FALSE(c.seconds_per_epoch());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  c.EpochBegin(1);
  ASSERT_TRUE(c.seconds_per_epoch());
  EXPECT_GE(*c.seconds_per_epoch(), 0.05);
  EXPECT_LT(*c.seconds_per_epoch(), 5.0);
}

}  // namespace
}  // namespace tv::markers_risk_test
