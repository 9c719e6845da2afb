#include "core/json_shape.h"

#include <fmt/format.h>

#include <array>
#include <vector>

#include "core/run_file.h"

namespace tv {
namespace {

template <typename Json>
unsigned KindOf(const Json& v) {
  if (v.is_null()) return kJsonNull;
  if (v.is_boolean()) return kJsonBool;
  if (v.is_number()) return kJsonNumber;
  if (v.is_string()) return kJsonString;
  if (v.is_array()) return kJsonArray;
  return kJsonObject;  // binary values never come from text
}

std::string_view KindName(unsigned kind) {
  switch (kind) {
    case kJsonNull:
      return "null";
    case kJsonBool:
      return "a boolean";
    case kJsonNumber:
      return "a number";
    case kJsonString:
      return "a string";
    case kJsonArray:
      return "an array";
    default:
      return "an object";
  }
}

// "a number or null", "an array, an object or null".
std::string Expected(unsigned kinds) {
  std::vector<std::string_view> names;
  for (unsigned k : {kJsonNumber, kJsonString, kJsonBool, kJsonArray, kJsonObject, kJsonNull}) {
    if ((kinds & k) != 0) names.push_back(KindName(k));
  }
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

// A key as a message shows it: printable ASCII, at most 40 characters.
std::string Shown(std::string_view key) {
  std::string out;
  for (char c : key.substr(0, 40)) out += c >= 0x20 && c < 0x7f ? c : '?';
  if (key.size() > 40) out += "...";
  return out;
}

// The first breach of a rule with `tokens` left to walk below `v` (found at `at`).
template <typename Json>
std::string Check(const Json& v, std::span<const std::string_view> tokens, const std::string& at,
                  unsigned kinds) {
  if (tokens.empty()) {
    if ((KindOf(v) & kinds) != 0) return "";
    return at.empty() ? fmt::format("expected {}, got {}", Expected(kinds), KindName(KindOf(v)))
                      : fmt::format("key {}: expected {}, got {}", at, Expected(kinds),
                                    KindName(KindOf(v)));
  }
  std::string_view token = tokens.front();
  std::span<const std::string_view> rest = tokens.subspan(1);
  if (token == "[]") {
    if (!v.is_array()) return "";
    for (size_t i = 0; i < v.size(); ++i) {
      std::string e = Check(v[i], rest, fmt::format("{}[{}]", at, i), kinds);
      if (!e.empty()) return e;
    }
    return "";
  }
  if (!v.is_object()) return "";
  auto path = [&](std::string_view key) { return at.empty() ? Shown(key) : at + "." + Shown(key); };
  if (token == "*") {
    for (auto it = v.begin(); it != v.end(); ++it) {
      std::string e = Check(*it, rest, path(it.key()), kinds);
      if (!e.empty()) return e;
    }
    return "";
  }
  auto it = v.find(token);
  if (it == v.end()) return "";
  return Check(*it, rest, path(token), kinds);
}

// "epochs[].complete" -> {"epochs", "[]", "complete"}.
std::vector<std::string_view> Tokens(std::string_view path) {
  std::vector<std::string_view> out;
  while (!path.empty()) {
    if (path.starts_with("[]")) {
      out.push_back("[]");
      path.remove_prefix(2);
    } else if (path.front() == '.') {
      path.remove_prefix(1);
    } else {
      size_t end = path.find_first_of(".[");
      out.push_back(path.substr(0, end));
      path = end == std::string_view::npos ? std::string_view() : path.substr(end);
    }
  }
  return out;
}

template <typename Json>
std::string ShapeError(const Json& doc, std::span<const JsonRule> rules) {
  for (const JsonRule& rule : rules) {
    std::vector<std::string_view> tokens = Tokens(rule.path);
    std::string e = Check(doc, tokens, "", rule.kinds);
    if (!e.empty()) return e;
  }
  return "";
}

constexpr unsigned kNumberOrNull = kJsonNumber | kJsonNull;

constexpr auto kSummary = std::to_array<JsonRule>({
    {"", kJsonObject},
    {"run_dir", kJsonString},
    {"command", kJsonArray},
    {"start_t", kNumberOrNull},
    {"end_t", kNumberOrNull},
    {"duration_s", kNumberOrNull},
    {"exit_code", kNumberOrNull},
    {"exit_signal", kNumberOrNull},
    {"host", kJsonObject},
    {"job", kJsonObject},
    {"training", kJsonObject},
    {"gpus", kJsonArray},
    {"gpus[]", kJsonObject},
    {"epochs", kJsonArray},
    {"epochs[]", kJsonObject},
    {"epochs[].epoch", kJsonNumber},
    {"epochs[].complete", kJsonBool},
    {"epochs[].logs", kJsonObject},
    {"epochs[].gpus", kJsonArray},
    {"epochs[].gpus[]", kJsonObject},
    {"phases", kJsonObject},
    {"phases.*", kJsonObject},
    {"phases.*.gpus", kJsonArray},
    {"findings", kJsonArray},
    {"findings[]", kJsonObject},
    {"findings[].id", kJsonString},
    {"findings[].severity", kJsonString},
    {"findings[].message", kJsonString},
    {"findings[].subject", kJsonObject},
    {"findings[].advice", kJsonArray},
    {"alerts", kJsonArray},
    {"alerts[]", kJsonObject},
    {"alerts[].alert", kJsonString},
    {"alerts[].severity", kJsonString},
    {"alerts[].summary", kJsonString},
    {"cost", kJsonObject},
    {"cost.currency", kJsonString},
    {"cost.busy_basis", kJsonString},
    {"cost.co2e_estimate", kJsonBool},
    {"cost.lost", kJsonObject},
    {"cost.forecast", kJsonObject},
    {"cost.epochs", kJsonArray},
    {"cost.epochs[]", kJsonObject},
    {"cost.phases", kJsonObject},
    {"health", kJsonObject},
    {"health.note", kJsonString},
    {"health.breakdown", kJsonArray},
    {"memory_trends", kJsonArray},
    {"processes", kJsonObject},
    {"leaked", kJsonArray},
    {"exception", kJsonObject},
});

constexpr auto kMeta = std::to_array<JsonRule>({
    {"", kJsonObject},
    {"name", kJsonString},
    {"host", kJsonString},
    {"mode", kJsonString},
    {"command", kJsonArray},
    {"start_t", kJsonNumber},
    {"interval_s", kJsonNumber},
    {"gpus", kJsonArray},
    {"gpus[]", kJsonObject},
    {"gpus[].name", kJsonString},
});

constexpr auto kSampleRow = std::to_array<JsonRule>({
    {"", kJsonObject},
    {"t", kJsonNumber},
    {"elapsed_s", kJsonNumber},
    {"host", kJsonObject},
    {"job", kJsonObject},
    {"training", kJsonObject},
    {"training.ranks", kJsonArray},
    {"training.ranks[]", kJsonObject},
    {"gpus", kJsonArray},
    {"gpus[]", kJsonObject},
});

constexpr auto kEvent = std::to_array<JsonRule>({
    {"", kJsonObject},
    {"t", kJsonNumber},
    {"type", kJsonString},
    {"rank", kJsonNumber},
    {"pid", kJsonNumber},
    {"phase", kJsonString},
    {"alert", kJsonString},
    {"cgroup", kJsonString},
});

}  // namespace

std::string JsonShapeError(const nlohmann::json& doc, std::span<const JsonRule> rules) {
  return ShapeError(doc, rules);
}

std::string JsonShapeError(const nlohmann::ordered_json& doc, std::span<const JsonRule> rules) {
  return ShapeError(doc, rules);
}

std::span<const JsonRule> SummaryShape() { return kSummary; }
std::span<const JsonRule> MetaShape() { return kMeta; }
std::span<const JsonRule> SampleRowShape() { return kSampleRow; }
std::span<const JsonRule> EventShape() { return kEvent; }

std::string WhyLineUnusable(std::string_view line, std::span<const JsonRule> rules,
                            std::string_view what) {
  nlohmann::json j;
  std::string why;
  if (!ParseJsonLine(line, &j, &why)) return why;
  std::string e = JsonShapeError(j, rules);
  if (e.empty()) e = "not what its reader takes";
  return fmt::format("valid JSON but not {} ({})", what, e);
}

std::string_view JsonKindName(const nlohmann::json& v) { return KindName(KindOf(v)); }
std::string_view JsonKindName(const nlohmann::ordered_json& v) { return KindName(KindOf(v)); }

}  // namespace tv
