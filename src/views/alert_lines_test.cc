#include "views/alert_lines.h"

#include <gtest/gtest.h>

namespace tv {
namespace {

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
