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

}  // namespace
}  // namespace tv::pushgateway_sink_test
