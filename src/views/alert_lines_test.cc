#include "views/alert_lines.h"

#include <gtest/gtest.h>

namespace tv {
namespace {

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

}  // namespace
}  // namespace tv
