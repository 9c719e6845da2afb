// Data-wait timing end to end in one process: a real client writes its slot,
// the marker source reads the share of each tick it spent waiting.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "markers/client.h"
#include "sources/markers_fixture.h"

namespace tv::markers_wait_test {
namespace {

using std::chrono::milliseconds;
using std::this_thread::sleep_for;

struct Fixture : MarkerSourceFixture {
  Sample Read() { return MarkerSourceFixture::Read(mono_s += 1); }
  const StepSlot& Slot(int i) const { return endpoint->slots()[i]; }
  double mono_s = 0;
};

TEST(MarkerClient, WaitTimingAccumulatesInItsSlotAndBoundariesDropAPendingWait) {
  Fixture f;
  MarkerClient c(f.endpoint->socket_path(), -1, "x");
  ASSERT_TRUE(c.ok()) << c.error();
  const StepSlot& slot = f.Slot(c.slot());
  EXPECT_EQ(slot.wait_flags.load(), 0u);  // not measured until the first wait
  c.WaitBegin();
  EXPECT_EQ(slot.wait_flags.load(), kWaitMeasured | kWaitTimed);
  EXPECT_NE(slot.wait_start_ns.load(), 0u);
  sleep_for(milliseconds(20));
  c.WaitEnd();
  EXPECT_EQ(slot.wait_start_ns.load(), 0u);
  uint64_t waited = slot.wait_ns.load();
  EXPECT_GE(waited, 20'000'000u);
  EXPECT_LT(waited, 500'000'000u);
  EXPECT_EQ(c.wait_ns(), waited);
  c.WaitEnd();  // no wait pending: nothing added
  EXPECT_EQ(slot.wait_ns.load(), waited);

  for (int boundary = 0; boundary < 4; ++boundary) {
    c.WaitBegin();
    sleep_for(milliseconds(5));
    if (boundary == 0) c.EpochBegin(1);
    if (boundary == 1) c.EpochEnd(1);
    if (boundary == 2) c.PhaseBegin("eval");
    if (boundary == 3) c.PhaseEnd("eval");
    EXPECT_EQ(slot.wait_start_ns.load(), 0u);
    EXPECT_EQ(slot.wait_flags.load(), kWaitMeasured);  // out of the timed loop
    c.WaitEnd();
    EXPECT_EQ(slot.wait_ns.load(), waited) << "boundary " << boundary;
  }
}

TEST(MarkerClient, ASlotTakenAfterATimingProcessStartsUnmeasured) {
  Fixture f;
  int index = -1;
  {
    MarkerClient first(f.endpoint->socket_path(), -1, "x");
    index = first.slot();
    first.WaitBegin();
    first.WaitEnd();
    first.Close();
  }
  f.Read();  // the goodbye frees the slot
  MarkerClient second(f.endpoint->socket_path(), -1, "x");
  ASSERT_EQ(second.slot(), index);
  EXPECT_EQ(f.Slot(index).wait_flags.load(), 0u);
  EXPECT_EQ(f.Slot(index).wait_ns.load(), 0u);
}

TEST(MarkerSource, DataWaitRatioIsTheShareOfEachTickSpentWaiting) {
  Fixture f;
  MarkerClient c(f.endpoint->socket_path(), -1, "x");
  c.WaitBegin();
  c.WaitEnd();
  f.Read();                      // the baseline
  for (int i = 0; i < 5; ++i) {  // 30 ms waiting, 70 ms working
    c.WaitBegin();
    sleep_for(milliseconds(30));
    c.WaitEnd();
    sleep_for(milliseconds(70));
    c.Step(i);
  }
  Sample s = f.Read();
  ASSERT_TRUE(s.training.data_wait_ratio);
  EXPECT_NEAR(*s.training.data_wait_ratio, 0.3, 0.08);
  ASSERT_EQ(s.training.ranks.size(), 1u);
  EXPECT_EQ(s.training.ranks[0].data_wait_ratio, s.training.data_wait_ratio);
}

TEST(MarkerSource, AWaitInProgressCountsInEveryTickItSpans) {
  Fixture f;
  MarkerClient c(f.endpoint->socket_path(), -1, "x");
  c.WaitBegin();
  f.Read();  // the baseline, the wait already running
  for (int tick = 0; tick < 2; ++tick) {
    sleep_for(milliseconds(100));
    Sample s = f.Read();
    ASSERT_TRUE(s.training.data_wait_ratio);
    EXPECT_GT(*s.training.data_wait_ratio, 0.9);  // the whole tick, not 0 until the wait ends
    EXPECT_LE(*s.training.data_wait_ratio, 1.0);
  }
  c.WaitEnd();  // what was credited is not credited again
  sleep_for(milliseconds(100));
  Sample s = f.Read();
  ASSERT_TRUE(s.training.data_wait_ratio);
  EXPECT_LT(*s.training.data_wait_ratio, 0.1);
}

TEST(MarkerSource, DataWaitIsAbsentForProcessesThatDoNotTimeIt) {
  Fixture f;
  MarkerClient plain(f.endpoint->socket_path(), -1, "old");  // steps only, like an old client
  f.Read();
  plain.Step(0);
  sleep_for(milliseconds(20));
  Sample s = f.Read();
  EXPECT_FALSE(s.training.data_wait_ratio);
  ASSERT_EQ(s.training.ranks.size(), 1u);
  EXPECT_FALSE(s.training.ranks[0].data_wait_ratio);

  // One process that times and never waits: 0, and the untimed one does not dilute it.
  MarkerClient timed(f.endpoint->socket_path(), -1, "new");
  timed.WaitBegin();
  timed.WaitEnd();
  f.Read();
  sleep_for(milliseconds(50));
  timed.WaitBegin();
  sleep_for(milliseconds(25));
  timed.WaitEnd();
  Sample both = f.Read();
  ASSERT_TRUE(both.training.data_wait_ratio);
  EXPECT_NEAR(*both.training.data_wait_ratio, 1.0 / 3, 0.1);
}

}  // namespace
}  // namespace tv::markers_wait_test
