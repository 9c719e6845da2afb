#include "core/notice_event.h"

#include <string>
#include <string_view>

namespace tv {
namespace {

constexpr std::string_view kSource = "source";
constexpr std::string_view kNoticeMessage = "message";

std::string Text(const nlohmann::ordered_json& fields, std::string_view key) {
  auto it = fields.find(key);
  return it != fields.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

nlohmann::ordered_json NoticeFields(const Notice& notice) {
  return {{kSource, notice.source}, {kNoticeMessage, notice.message}};
}

std::optional<Notice> NoticeOfEvent(const Event& event) {
  if (event.type != EventType::kSourceUnavailable) return std::nullopt;
  return Notice{Text(event.fields, kSource), Text(event.fields, kNoticeMessage)};
}

}  // namespace tv
