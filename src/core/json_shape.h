// The shapes of the run directory's JSON (summary.json, meta.json, a row of
// samples.jsonl, a line of events.jsonl): which keys, where present, hold
// which JSON types. Readers check a document once, when they read it, so the
// code that uses it meets only the types it expects, and a file of the wrong
// shape is refused with the file and key named ("summary.json: key cost:
// expected an object, got null") rather than an exception or an abort deep in a
// view. Keys not listed may hold anything. Thread-safe (pure functions).
#pragma once

#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>

namespace tv {

// JSON types, to be or-ed.
enum JsonKinds : unsigned {
  kJsonNull = 1,
  kJsonBool = 2,
  kJsonNumber = 4,
  kJsonString = 8,
  kJsonArray = 16,
  kJsonObject = 32,
};

// The value at `path`, where present, is one of `kinds`. `path` is keys joined
// by '.', with "[]" for each element of an array and "*" for each member of an
// object: "" (the document), "cost", "epochs[]", "epochs[].complete",
// "phases.*". A rule below a value of another type (an "epochs[]" when epochs
// is not an array) does not apply: the rule on that value says so.
struct JsonRule {
  std::string_view path;
  unsigned kinds;
};

// "key cost: expected an object, got null" for the first value of `doc` that
// breaks one of `rules` (rules in order, "" as "the document"); empty when
// every rule holds.
std::string JsonShapeError(const nlohmann::json& doc, std::span<const JsonRule> rules);
std::string JsonShapeError(const nlohmann::ordered_json& doc, std::span<const JsonRule> rules);

// A value's kind in a message: "null", "a boolean", "a number", "a string",
// "an array" or "an object".
std::string_view JsonKindName(const nlohmann::json& v);
std::string_view JsonKindName(const nlohmann::ordered_json& v);

// What the readers of each file rely on.
std::span<const JsonRule> SummaryShape();
std::span<const JsonRule> MetaShape();
std::span<const JsonRule> SampleRowShape();
std::span<const JsonRule> EventShape();

// Why a line of a JSONL file was not usable, for a message: "not JSON",
// "nested deeper than 64 levels", or "valid JSON but not <what>
// (key host: expected an object, got a number)" against `rules`.
std::string WhyLineUnusable(std::string_view line, std::span<const JsonRule> rules,
                            std::string_view what);

}  // namespace tv
