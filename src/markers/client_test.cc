// The client's rare events as the endpoint receives them.
#include "markers/client.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <memory>
#include <optional>
#include <string>

#include "markers/endpoint.h"

namespace tv::client_test {
namespace {

// The next marker the endpoint holds, of `type` (the others skipped).
std::optional<Marker> Next(MarkerEndpoint& endpoint, MarkerType type) {
  std::string datagram;
  while (endpoint.Receive(&datagram)) {
    std::string error;
    std::optional<Marker> m = ParseMarker(datagram, &error);
    if (m && m->type == type) return m;
  }
  return std::nullopt;
}

// An endpoint and a client connected to it.
class MarkerClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    endpoint_ = MarkerEndpoint::Create(0.1, &error);
    ASSERT_NE(endpoint_, nullptr) << error;
    client_ = std::make_unique<MarkerClient>(endpoint_->socket_path(), -1, "test");
    ASSERT_TRUE(client_->ok()) << client_->error();
  }
  std::unique_ptr<MarkerEndpoint> endpoint_;
  std::unique_ptr<MarkerClient> client_;
};

TEST_F(MarkerClientTest, EpochBeginSaysTheStepsSoFarAndByeAllOfThem) {
  client_->EpochBegin(0);
  for (int i = 0; i < 3; ++i) client_->Step(i);
  client_->EpochEnd(0);
  client_->EpochBegin(1);
  for (int i = 3; i < 5; ++i) client_->Step(i);
  client_->Close("RuntimeError", "boom");  // epoch 1 cut after 2 steps: 5 - 3

  std::optional<Marker> first = Next(*endpoint_, MarkerType::kEpochBegin);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->steps, 0);
  std::optional<Marker> end = Next(*endpoint_, MarkerType::kEpochEnd);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->steps, 3);
  std::optional<Marker> second = Next(*endpoint_, MarkerType::kEpochBegin);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->epoch, 1);
  EXPECT_EQ(second->steps, 3);
  std::optional<Marker> bye = Next(*endpoint_, MarkerType::kBye);
  ASSERT_TRUE(bye);
  EXPECT_EQ(bye->steps, 5);
}

TEST_F(MarkerClientTest, EpochEndSaysItsOwnWaitAndTimedLoopOnlyWhenItTimedOne) {
  client_->EpochBegin(0);
  for (int i = 0; i < 3; ++i) {
    client_->WaitBegin();
    ::usleep(20'000);  // 20 ms waiting for the batch
    client_->WaitEnd();
    ::usleep(20'000);  // 20 ms of the step's work
    client_->Step(i);
  }
  client_->EpochEnd(0);
  client_->EpochBegin(1);  // an epoch that times no wait
  client_->Step(3);
  client_->EpochEnd(1);

  std::optional<Marker> timed = Next(*endpoint_, MarkerType::kEpochEnd);
  ASSERT_TRUE(timed);
  ASSERT_TRUE(timed->wait_s && timed->timed_s);
  EXPECT_GE(*timed->wait_s, 0.060);
  EXPECT_GE(*timed->timed_s, 0.120);
  EXPECT_LE(*timed->wait_s, *timed->timed_s);
  std::optional<Marker> untimed = Next(*endpoint_, MarkerType::kEpochEnd);
  ASSERT_TRUE(untimed);
  EXPECT_FALSE(untimed->wait_s);
  EXPECT_FALSE(untimed->timed_s);
}

TEST_F(MarkerClientTest, WaitsAddedWholeCountInTheEpochAndNeverExceedItsLoop) {
  client_->EpochBegin(0);
  client_->WaitAdd(0);  // enters the timed loop, no wait yet
  ::usleep(40'000);
  client_->WaitAdd(15'000'000);  // a producer thread's batch kept the step 15 ms
  client_->WaitAdd(5'000'000);
  client_->Step(0);
  client_->EpochEnd(0);
  client_->EpochBegin(1);
  client_->WaitAdd(0);
  client_->WaitAdd(5'000'000'000);  // more than the loop lasted: capped
  client_->EpochEnd(1);

  std::optional<Marker> first = Next(*endpoint_, MarkerType::kEpochEnd);
  ASSERT_TRUE(first);
  ASSERT_TRUE(first->wait_s && first->timed_s);
  EXPECT_DOUBLE_EQ(*first->wait_s, 0.020);
  EXPECT_GE(*first->timed_s, 0.040);
  std::optional<Marker> capped = Next(*endpoint_, MarkerType::kEpochEnd);
  ASSERT_TRUE(capped);
  ASSERT_TRUE(capped->wait_s && capped->timed_s);
  EXPECT_EQ(*capped->wait_s, *capped->timed_s);
}

}  // namespace
}  // namespace tv::client_test
