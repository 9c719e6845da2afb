#include "sources/xplane.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tv::xplane_test {
namespace {

// Protobuf's wire format, written: the few field kinds an XSpace uses.
std::string Varint(uint64_t v) {
  std::string out;
  do {
    auto byte = static_cast<char>(v & 0x7f);
    v >>= 7;
    out += static_cast<char>(byte | (v != 0 ? 0x80 : 0));
  } while (v != 0);
  return out;
}
std::string Int(int field, int64_t v) {
  return Varint(static_cast<uint64_t>(field) << 3) + Varint(static_cast<uint64_t>(v));
}
std::string Bytes(int field, const std::string& v) {
  return Varint((static_cast<uint64_t>(field) << 3) | 2) + Varint(v.size()) + v;
}

// An XPlane's event_metadata (4) or stat_metadata (5) entry: {key, {id, name}}.
std::string Named(int field, int64_t id, const std::string& name) {
  return Bytes(field, Int(1, id) + Bytes(2, Int(1, id) + Bytes(2, name)));
}
// An XEvent at `offset_us` from its line's start, lasting `dur_us`.
std::string Event(int64_t id, int64_t offset_us, int64_t dur_us) {
  return Bytes(4, Int(1, id) + Int(2, offset_us * 1'000'000) + Int(3, dur_us * 1'000'000));
}
std::string Line(const std::string& name, const std::vector<std::string>& events) {
  std::string line = Bytes(2, name) + Int(3, 0);
  for (const std::string& e : events) line += e;
  return Bytes(3, line);
}

// Two steps of 100 us in a 200 us profile: each waits 40 us in IteratorGetNext,
// runs a MatMul (30 us) and a Relu (5 us) inside the executor's Process range,
// and on the GPU copies for 10 us then runs a kernel for 20 us.
std::string TwoSteps() {
  std::string host = Bytes(2, "/host:CPU") + Named(4, 1, "IteratorGetNextOp::DoCompute") +
                     Named(4, 2, "model/dense/MatMul:MatMul") +
                     Named(4, 3, "ExecutorState::Process") + Named(4, 4, "model/relu:Relu");
  std::vector<std::string> get_next, compute;
  std::vector<std::string> stream;
  for (int64_t t : {0, 100}) {
    get_next.push_back(Event(1, t, 40));
    compute.push_back(Event(3, t + 40, 60));
    compute.push_back(Event(2, t + 40, 30));
    compute.push_back(Event(4, t + 75, 5));
    stream.push_back(Event(1, t + 40, 10));
    stream.push_back(Event(2, t + 50, 20));
  }
  host += Line("tf_data_iterator_get_next/1", get_next) + Line("tf_Compute/7", compute);
  std::string gpu = Bytes(2, "/device:GPU:0") + Named(4, 1, "MemcpyH2D") +
                    Named(4, 2, "volta_sgemm_128x64_nn") + Line("Stream #14", stream);
  std::string task = Bytes(2, "Task Environment") + Named(5, 1, "profile_start_time") +
                     Named(5, 2, "profile_stop_time") +
                     Bytes(6, Int(1, 1) + Int(4, 1'796'000'000'000'000'000)) +
                     Bytes(6, Int(1, 2) + Int(4, 1'796'000'000'000'200'000));
  return Bytes(1, host) + Bytes(1, gpu) + Bytes(1, task);
}

TEST(XPlane, SharesOfTheProfiledStepsFromTensorFlowsTrace) {
  TraceFigures f;
  ASSERT_TRUE(XPlaneFiguresOf(TwoSteps(), 2, &f).ok());
  EXPECT_EQ(f.steps, 2);
  EXPECT_NEAR(*f.step_s, 100e-6, 1e-12);
  EXPECT_NEAR(*f.data_loader_share, 0.4, 1e-9);
  EXPECT_NEAR(*f.h2d_share, 0.1, 1e-9);
  EXPECT_NEAR(*f.gpu_idle_share, 0.7, 1e-9);
  // The executor's own Process range is no operator; operators by their type.
  ASSERT_EQ(f.top_ops.size(), 2u);
  EXPECT_EQ(f.top_ops[0].first, "MatMul");
  EXPECT_NEAR(f.top_ops[0].second, 0.3, 1e-9);
  EXPECT_EQ(f.top_ops[1].first, "Relu");
  ASSERT_EQ(f.top_kernels.size(), 1u);  // MemcpyH2D is a copy
  EXPECT_EQ(f.top_kernels[0].first, "volta_sgemm_128x64_nn");
  EXPECT_NEAR(f.top_kernels[0].second, 0.2, 1e-9);
}

TEST(XPlane, DamagedOrForeignBytesAreErrorsNotCrashes) {
  TraceFigures f;
  std::string good = TwoSteps();
  EXPECT_FALSE(XPlaneFiguresOf("", 2, &f).ok());
  EXPECT_FALSE(XPlaneFiguresOf("{\"traceEvents\": []}", 2, &f).ok());
  for (size_t cut : {good.size() / 3, good.size() / 2, good.size() - 1}) {
    EXPECT_FALSE(XPlaneFiguresOf(good.substr(0, cut), 2, &f).ok()) << cut;
  }
  std::string flipped = good;
  for (size_t i = 7; i < flipped.size(); i += 13) flipped[i] = static_cast<char>(0xff);
  XPlaneFiguresOf(flipped, 2, &f);                  // any answer, no crash
  EXPECT_FALSE(XPlaneFiguresOf(good, 0, &f).ok());  // no steps to spread the profile over
}

}  // namespace
}  // namespace tv::xplane_test
