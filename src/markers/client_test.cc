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

TEST(MarkerClient, EpochBeginSaysTheStepsSoFarAndByeAllOfThem) {
  std::string error;
  std::unique_ptr<MarkerEndpoint> endpoint = MarkerEndpoint::Create(0.1, &error);
  ASSERT_NE(endpoint, nullptr) << error;
  MarkerClient client(endpoint->socket_path(), -1, "test");
  ASSERT_TRUE(client.ok()) << client.error();
  client.EpochBegin(0);
  for (int i = 0; i < 3; ++i) client.Step(i);
  client.EpochEnd(0);
  client.EpochBegin(1);
  for (int i = 3; i < 5; ++i) client.Step(i);
  client.Close("RuntimeError", "boom");  // epoch 1 cut after 2 steps: 5 - 3

  std::optional<Marker> first = Next(*endpoint, MarkerType::kEpochBegin);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->steps, 0);
  std::optional<Marker> end = Next(*endpoint, MarkerType::kEpochEnd);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->steps, 3);
  std::optional<Marker> second = Next(*endpoint, MarkerType::kEpochBegin);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->epoch, 1);
  EXPECT_EQ(second->steps, 3);
  std::optional<Marker> bye = Next(*endpoint, MarkerType::kBye);
  ASSERT_TRUE(bye);
  EXPECT_EQ(bye->steps, 5);
}

TEST(MarkerClient, EpochEndSaysItsOwnWaitAndTimedLoopOnlyWhenItTimedOne) {
  std::string error;
  std::unique_ptr<MarkerEndpoint> endpoint = MarkerEndpoint::Create(0.1, &error);
  ASSERT_NE(endpoint, nullptr) << error;
  MarkerClient client(endpoint->socket_path(), -1, "test");
  ASSERT_TRUE(client.ok()) << client.error();
  client.EpochBegin(0);
  for (int i = 0; i < 3; ++i) {
    client.WaitBegin();
    ::usleep(20'000);  // 20 ms waiting for the batch
    client.WaitEnd();
    ::usleep(20'000);  // 20 ms of the step's work
    client.Step(i);
  }
  client.EpochEnd(0);
  client.EpochBegin(1);  // an epoch that times no wait
  client.Step(3);
  client.EpochEnd(1);

  std::optional<Marker> timed = Next(*endpoint, MarkerType::kEpochEnd);
  ASSERT_TRUE(timed);
  ASSERT_TRUE(timed->wait_s && timed->timed_s);
  EXPECT_GE(*timed->wait_s, 0.060);
  EXPECT_GE(*timed->timed_s, 0.120);
  EXPECT_LE(*timed->wait_s, *timed->timed_s);
  std::optional<Marker> untimed = Next(*endpoint, MarkerType::kEpochEnd);
  ASSERT_TRUE(untimed);
  EXPECT_FALSE(untimed->wait_s);
  EXPECT_FALSE(untimed->timed_s);
}

}  // namespace
}  // namespace tv::client_test
