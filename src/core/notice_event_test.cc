#include "core/notice_event.h"

#include <gtest/gtest.h>

namespace tv::notice_event_test {
namespace {

TEST(NoticeEvent, ANoticeIsWrittenAndReadBack) {
  Event e{1, EventType::kSourceUnavailable, NoticeFields(Notice{"rapl", "not readable"})};
  EXPECT_EQ(e.fields.dump(), R"({"source":"rapl","message":"not readable"})");
  std::optional<Notice> back = NoticeOfEvent(e);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->source, "rapl");
  EXPECT_EQ(back->message, "not readable");
  EXPECT_FALSE(NoticeOfEvent(Event{1, EventType::kEnd, {}}));
  std::optional<Notice> odd =
      NoticeOfEvent(Event{1, EventType::kSourceUnavailable, {{"source", 3}}});
  ASSERT_TRUE(odd);
  EXPECT_EQ(odd->source, "");
  EXPECT_EQ(odd->message, "");
}

}  // namespace
}  // namespace tv::notice_event_test
