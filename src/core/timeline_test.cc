#include "core/timeline.h"

#include <gtest/gtest.h>

#include "core/sink_thread.h"

namespace tv {
namespace {

TEST(Timeline, KeepsTheNewestRowsWithinCapacity) {
  Timeline tl(3);
  for (int i = 0; i < 5; ++i) {
    Row r;
    r.elapsed_s = i;
    tl.OnRow(r);
  }
  auto rows = tl.Snapshot();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows.front().elapsed_s, 2);
  EXPECT_EQ(rows.back().elapsed_s, 4);
  EXPECT_EQ(tl.evicted(), 2u);
}

TEST(Timeline, FedThroughTheSinkThread) {
  Timeline tl(10);
  SinkThread sinks({&tl});
  sinks.Start();
  for (int i = 0; i < 4; ++i) sinks.PushRow(Row{});
  sinks.Close();
  EXPECT_EQ(tl.size(), 4u);
}

}  // namespace
}  // namespace tv
