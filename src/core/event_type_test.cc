#include "core/event_type.h"

#include <gtest/gtest.h>

#include <set>

namespace tv::event_type_test {
namespace {

TEST(EventTypes, EveryTypeHasOneUniqueNameThatParsesBack) {
  std::set<std::string_view> names;
  int expected = 0;
  for (const EventTypeDef& d : EventTypes()) {
    EXPECT_EQ(static_cast<int>(d.type), expected++) << d.name << ": the table follows the enum";
    EXPECT_TRUE(names.insert(d.name).second) << d.name;
    EXPECT_EQ(EventTypeName(d.type), d.name);
    EXPECT_EQ(ParseEventType(d.name), d.type);
  }
  EXPECT_EQ(ParseEventType("epoch_start"), std::nullopt);
}

TEST(EventTypes, ATypeWithoutWordsSharesTheRowBeforeIt) {
  std::string md = EventsMarkdown();
  EXPECT_NE(md.find("| `epoch_begin`, `epoch_end` | `pid`, `rank`, `epoch`;"), std::string::npos)
      << md;
  EXPECT_NE(md.find("| `start` | `pid`, `mode` | monitoring began |\n"), std::string::npos);
  EXPECT_TRUE(EventTypes().front().keys.size() > 0);
}

}  // namespace
}  // namespace tv::event_type_test
