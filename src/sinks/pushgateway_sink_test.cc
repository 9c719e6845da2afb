#include "sinks/pushgateway_sink.h"

#include <gtest/gtest.h>

namespace tv::pushgateway_sink_test {
namespace {

TEST(PushgatewayGroupPath, PlainValuesGoAsTheyAre) {
  EXPECT_EQ(PushgatewayGroupPath("train", "node-1.example"),
            "/metrics/job/train/instance/node-1.example");
}

TEST(PushgatewayGroupPath, OtherValuesGoAsBase64Url) {
  // "a/b" -> YS9i, "x y?" -> eCB5Pw==, empty -> "=".
  EXPECT_EQ(PushgatewayGroupPath("a/b", "x y?"),
            "/metrics/job@base64/YS9i/instance@base64/eCB5Pw==");
  EXPECT_EQ(PushgatewayGroupPath("", "h"), "/metrics/job@base64/=/instance/h");
}

TEST(PushgatewayGroupPath, InvalidUtf8IsReplacedBeforeEncoding) {
  // "\xC3" alone is not UTF-8: it goes as U+FFFD (EF BF BD -> 77-9), as the label would.
  EXPECT_EQ(PushgatewayGroupPath("\xC3", "h"), "/metrics/job@base64/77-9/instance/h");
}

TEST(PushgatewayGroupPath, ARunOfAJobPushesToTheJobsGroupOneARun) {
  PromLabels labels;
  labels.host = "node-1";
  labels.run = "train";
  EXPECT_EQ(PushgatewayGroupPath(labels), "/metrics/job/train/instance/node-1");
  labels.job = "10.0.0.1:29500@2026-11-30T14:05Z";
  EXPECT_EQ(PushgatewayGroupPath(labels),
            "/metrics/job@base64/MTAuMC4wLjE6Mjk1MDBAMjAyNi0xMS0zMFQxNDowNVo=/instance/node-1/"
            "run/train");
  labels.job = "4242";
  EXPECT_EQ(PushgatewayGroupPath(labels), "/metrics/job/4242/instance/node-1/run/train");
}

}  // namespace
}  // namespace tv::pushgateway_sink_test
