#include "store/event_line.h"

#include <gtest/gtest.h>

namespace tv::event_line_test {
namespace {

TEST(EventLine, TimeAndTypeComeFirstThenTheFieldsInTheirOrder) {
  Event e{1800000000.12345,
          EventType::kSourceUnavailable,
          {{"source", "rapl"}, {"message", "not readable"}}};
  nlohmann::ordered_json line = EventLineJson(e);
  EXPECT_EQ(line.dump(), R"({"t":1800000000.123,"type":"source_unavailable","source":"rapl",)"
                         R"("message":"not readable"})");
  EXPECT_EQ(EventLineType(line), EventType::kSourceUnavailable);
  EXPECT_EQ(EventLineType(nlohmann::json::parse(line.dump())), EventType::kSourceUnavailable);
}

TEST(EventLine, ALineWithoutANumericTimeOrAKnownTypeHasNone) {
  EXPECT_FALSE(EventLineType(nlohmann::json::parse(R"({"type":"end"})")));
  EXPECT_FALSE(EventLineType(nlohmann::json::parse(R"({"t":"1","type":"end"})")));
  EXPECT_FALSE(EventLineType(nlohmann::json::parse(R"({"t":1,"type":"nonsense"})")));
  EXPECT_FALSE(EventLineType(nlohmann::json::parse(R"({"t":1,"type":7})")));
  EXPECT_FALSE(EventLineType(nlohmann::json::array()));
  EXPECT_EQ(EventLineType(nlohmann::json::parse(R"({"t":1,"type":"end"})")), EventType::kEnd);
}

}  // namespace
}  // namespace tv::event_line_test
