#include "sources/profile_requests.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "markers/client.h"

namespace tv::profile_requests_test {
namespace {

TEST(ProfileRequests, AProcessSeesTheRequestAtItsNextStepAndReadsItOnce) {
  std::string error;
  auto endpoint = MarkerEndpoint::Create(1.0, &error);
  ASSERT_TRUE(endpoint) << error;
  ProfileRequests requests(endpoint.get());
  EXPECT_FALSE(requests.Request("request", 5, -1, "a"));  // nobody to ask
  MarkerClient client(endpoint->socket_path(), 3, "torch");
  ASSERT_TRUE(client.ok()) << client.error();
  EXPECT_EQ(client.Step(-1) & kStepRequest, 0u);
  EXPECT_FALSE(requests.Request("request", 5, 1, "a"));  // no process of rank 1
  ASSERT_TRUE(requests.Request("request", 5, 3, "ask-7"));
  EXPECT_NE(client.Step(-1) & kStepRequest, 0u);
  nlohmann::json request = nlohmann::json::parse(client.TakeRequest());
  EXPECT_EQ(request["what"], "profile");
  EXPECT_EQ(request["steps"], 5);
  EXPECT_EQ(request["id"], "ask-7");
  EXPECT_EQ(client.TakeRequest(), "");
  EXPECT_EQ(client.Step(-1) & kStepRequest, 0u);
}

TEST(ProfileRequests, AFindingAsksOnceAndOnlyWithinTheBudget) {
  std::string error;
  auto endpoint = MarkerEndpoint::Create(1.0, &error);
  ASSERT_TRUE(endpoint) << error;
  ProfileRequests requests(endpoint.get());
  MarkerClient client(endpoint->socket_path(), -1, "torch");
  ASSERT_TRUE(client.ok());
  // 20 steps of 0.1 s: 2 s, over 1 % of 100 s.
  EXPECT_FALSE(requests.RequestFor("input-bound", 20, 0.1, 100, 0.01));
  EXPECT_TRUE(requests.RequestFor("input-bound", 20, 0.1, 300, 0.01));
  EXPECT_FALSE(requests.RequestFor("input-bound", 20, 0.1, 3000, 0.01));  // once a run
  // The first capture's 2 s count against the next.
  EXPECT_FALSE(requests.RequestFor("cpu-bound", 20, 0.1, 300, 0.01));
  EXPECT_TRUE(requests.RequestFor("cpu-bound", 20, 0.1, 400, 0.01));
  EXPECT_FALSE(requests.RequestFor("straggler", 0, 0.1, 4000, 0.01));  // profile_steps = 0
}

}  // namespace
}  // namespace tv::profile_requests_test
