#include "core/headline.h"

#include <cmath>
#include <limits>

namespace tv {
namespace {

template <typename Json>
const Json& Member(const Json& j, const char* key) {
  static const Json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it != j.end() ? *it : kNull;
}

template <typename Json>
std::optional<double> Number(const Json& j, const char* key) {
  const Json& v = Member(j, key);
  if (!v.is_number()) return std::nullopt;
  double d = v.template get<double>();
  return std::isfinite(d) ? std::optional<double>(d) : std::nullopt;
}

template <typename Json>
std::string Text(const Json& j, const char* key) {
  const Json& v = Member(j, key);
  return v.is_string() ? v.template get<std::string>() : std::string();
}

template <typename Json>
RunHeadline Read(const Json& summary) {
  RunHeadline h;
  const Json& cost = Member(summary, "cost");
  h.gpu_busy_ratio = Number(cost, "busy_ratio");
  h.busy_basis = Text(cost, "busy_basis");
  // A file's number, cast only when it fits.
  if (auto n = Number(cost, "gpus_used"); n && *n >= 0 && *n <= std::numeric_limits<int>::max()) {
    h.gpus_used = static_cast<int>(*n);
  }
  h.gpu_energy_kwh = Number(cost, "gpu_energy_kwh");
  h.energy_kwh = Number(cost, "energy_kwh");
  h.money = Number(cost, "money");
  if (h.money) h.currency = Text(cost, "currency");
  const Json& health = Member(summary, "health");
  h.health_score = Number(health, "score");
  if (!h.health_score) h.health_note = Text(health, "note");
  return h;
}

}  // namespace

RunHeadline HeadlineOf(const nlohmann::json& summary) { return Read(summary); }
RunHeadline HeadlineOf(const nlohmann::ordered_json& summary) { return Read(summary); }

}  // namespace tv
