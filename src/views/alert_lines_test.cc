#include "views/alert_lines.h"

#include <gtest/gtest.h>

namespace tv::alert_lines_test {
namespace {

// The line of an event of `type` with `fields`.
std::string FormatAlertLine(std::string_view type, const nlohmann::ordered_json& fields) {
  return tv::FormatAlertLine(Event{.type = *ParseEventType(type), .fields = fields});
}

TEST(AlertLines, AResolvedAlertSaysWhatHoldsNow) {
  nlohmann::ordered_json fields = {{"alert", "job-mem-high"},
                                   {"firing_s", 12.0},
                                   {"summary", "job memory 524 MiB, back under 600 MiB"},
                                   {"resolved_by", "condition"}};
  EXPECT_EQ(FormatAlertLine("alert_resolved", fields),
            "trainvitals: resolved job-mem-high after 12.0 s: job memory 524 MiB, back under 600 "
            "MiB");
  fields = {{"alert", "gpu-low-util"},
            {"gpu", 0},
            {"firing_s", 3.5},
            {"summary", "the run ended (GPU 0 util was 0% under 20%)"},
            {"resolved_by", "run_end"}};
  EXPECT_EQ(FormatAlertLine("alert_resolved", fields),
            "trainvitals: resolved gpu-low-util (GPU 0) after 3.5 s: the run ended (GPU 0 util "
            "was 0% under 20%)");
  // An event without its summary (an older run's) says what it can.
  EXPECT_EQ(FormatAlertLine("alert_resolved", {{"alert", "r"}, {"firing_s", 2.0}}),
            "trainvitals: resolved r after 2.0 s");
}

TEST(AlertLines, LostNoticesAreOneLineWithEachActionAndWhy) {
  nlohmann::ordered_json fields = {{"count", 5},
                                   {"actions",
                                    {{{"alert", "gpu-low-util"},
                                      {"action", "webhook"},
                                      {"count", 3},
                                      {"failed", 1},
                                      {"queue_full", 0},
                                      {"run_ended", 2}},
                                     {{"alert", "oom-risk"},
                                      {"action", "command"},
                                      {"count", 2},
                                      {"failed", 0},
                                      {"queue_full", 2},
                                      {"run_ended", 0}}}}};
  EXPECT_EQ(FormatAlertLine("alert_notices_lost", fields),
            "trainvitals: 5 alert notices were not delivered (gpu-low-util webhook: 1 failed, 2 "
            "cut off by the end; oom-risk command: 2 gave way in a full queue)");
}

TEST(AlertLines, OneLostNoticeIsSingular) {
  nlohmann::ordered_json fields = {
      {"count", 1},
      {"actions", {{{"alert", "r"}, {"action", "webhook"}, {"count", 1}, {"run_ended", 1}}}}};
  EXPECT_EQ(FormatAlertLine("alert_notices_lost", fields),
            "trainvitals: 1 alert notice was not delivered (r webhook: 1 cut off by the end)");
}

TEST(AlertLines, AFiringAlertSaysItsSeverityAndGpu) {
  nlohmann::ordered_json fields = {{"alert", "gpu-low-util"},
                                   {"severity", "critical"},
                                   {"gpu", 1},
                                   {"summary", "GPU 1 util 3% under 20%"}};
  EXPECT_EQ(FormatAlertLine("alert_firing", fields),
            "trainvitals: ALERT gpu-low-util (critical, GPU 1): GPU 1 util 3% under 20%");
  EXPECT_EQ(FormatAlertLine("alert_action_failed",
                            {{"alert", "r"}, {"action", "webhook"}, {"message", "HTTP 500"}}),
            "trainvitals: alert r: its webhook failed: HTTP 500");
  // An event its record cannot read says nothing.
  EXPECT_EQ(FormatAlertLine("alert_firing", {{"alert", "r"}, {"gpu", "one"}}), "");
}

TEST(AlertLines, TheSummarySaysEachAlertThatFired) {
  std::vector<AlertRecord> alerts(2);
  alerts[0] = {.alert = "job-memory-high", .times_fired = 1, .firing_s = 5.1, .summary = "s"};
  alerts[1] = {.alert = "gpu-low-util",
               .severity = Severity::kCritical,
               .gpu = 0,
               .times_fired = 3,
               .firing_s = 75,
               .summary = "t"};
  EXPECT_EQ(FormatAlerts(alerts),
            "  Alerts   job-memory-high (warning): fired once, 5.1 s in all: s\n"
            "  Alerts   gpu-low-util (GPU 0) (critical): fired 3 times, 1:15 in all: t\n");
  EXPECT_EQ(FormatAlerts({}), "");
}

}  // namespace
}  // namespace tv::alert_lines_test
