// How the run records of src/store/ go to JSON and back, written once for all
// of them: Put writes a key only when it has a value, and RecordFields reads
// the keys of one JSON object into a record's fields, naming the first value of
// the wrong type by its path from the document ("key epochs[1].gpus[0].index:
// expected a whole number, got a string"). For the records' own .cc files only.
// Thread-safe (no shared state).
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/event_type.h"
#include "core/json_shape.h"
#include "core/status.h"
#include "store/event_line.h"

namespace tv {

template <typename T>
void Put(nlohmann::ordered_json& j, std::string_view key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

// The keys more than one record writes (besides an events.jsonl line's own,
// store/event_line.h): the subject and words of a finding and of an alert,
// and the signal and count of an alert action and of the job's end.
constexpr std::string_view kSeverity = "severity";
constexpr std::string_view kGpu = "gpu";
constexpr std::string_view kPid = "pid";
constexpr std::string_view kMessage = "message";
constexpr std::string_view kSignal = "signal";
constexpr std::string_view kCount = "count";

// A reading's outcome from the first error it kept (none: Ok).
inline Status ReadingStatus(const std::string& error) {
  return error.empty() ? Status::Ok() : Status::Invalid(error);
}

inline void PutText(nlohmann::ordered_json& j, std::string_view key, const std::string& v) {
  if (!v.empty()) j[key] = v;
}

// How a record takes what it cannot use.
enum class RecordReading {
  // The first value of the wrong type is the error and ends the reading; a
  // null is a value of the wrong type. For records a reader refuses whole.
  kStrict,
  // A value of the wrong type leaves its field as it was, the first is kept
  // as the error, and the rest is read; a null is as absent. For records every
  // view shows as far as they can be read.
  kKeepGoing,
};

// The keys of one JSON object (`j`, at path `at` in its document), read into
// fields; the error goes to `*error`, kept by every reader of one document.
template <typename Json>
class RecordFields {
 public:
  RecordFields(const Json& j, std::string at, std::string* error,
               RecordReading reading = RecordReading::kStrict)
      : j_(j), at_(std::move(at)), error_(error), reading_(reading) {}

  // Whether the value is an object (else the error says so; a null is no
  // error when read leniently).
  bool Object() {
    if (j_.is_object()) return true;
    if (!(lenient() && j_.is_null())) Fail(at_, "an object", j_);
    return false;
  }
  // The value of `key`; null when absent, null (read leniently), or after an
  // error (read strictly).
  const Json* Find(std::string_view key) const {
    if (!lenient() && !error_->empty()) return nullptr;
    auto it = j_.find(key);
    if (it == j_.end() || (lenient() && it->is_null())) return nullptr;
    return &*it;
  }
  std::string Path(std::string_view key) const {
    return at_.empty() ? std::string(key) : fmt::format("{}.{}", at_, key);
  }

  void Number(std::string_view key, std::optional<double>* out) {
    if (const Json* v = Find(key)) {
      if (v->is_number()) {
        *out = v->template get<double>();
      } else {
        Fail(Path(key), "a number", *v);
      }
    }
  }
  void Number(std::string_view key, double* out) { Set(key, out, &RecordFields::Number); }
  // A whole number, also when written as a float (30e9); a fraction is not one.
  void Whole(std::string_view key, std::optional<int64_t>* out) {
    if (const Json* v = Find(key)) *out = WholeOf(*v, Path(key));
  }
  void Whole(std::string_view key, int64_t* out) { Set(key, out, &RecordFields::Whole); }
  void Whole(std::string_view key, int* out) { Set(key, out, &RecordFields::Whole); }
  void Whole(std::string_view key, std::optional<int>* out) {
    const Json* v = Find(key);
    if (v == nullptr) return;
    std::optional<int64_t> n = WholeOf(*v, Path(key));
    if (!n) return;
    if (*n < std::numeric_limits<int>::min() || *n > std::numeric_limits<int>::max()) {
      return Fail(Path(key), "a whole number that fits an int", *v, true);
    }
    *out = static_cast<int>(*n);
  }
  void Text(std::string_view key, std::string* out) {
    if (const Json* v = Find(key)) {
      if (v->is_string()) {
        *out = v->template get<std::string>();
      } else {
        Fail(Path(key), "a string", *v);
      }
    }
  }
  void Bool(std::string_view key, std::optional<bool>* out) {
    if (const Json* v = Find(key)) {
      if (v->is_boolean()) {
        *out = v->template get<bool>();
      } else {
        Fail(Path(key), "a boolean", *v);
      }
    }
  }
  void Bool(std::string_view key, bool* out) { Set(key, out, &RecordFields::Bool); }
  // A string `key` named by `parse` (a std::optional of the value), else the
  // error says `expected` ("info, warning or critical") and the value.
  template <typename T, typename Parse>
  void Named(std::string_view key, T* out, Parse parse, std::string_view expected) {
    const Json* v = Find(key);
    if (v == nullptr) return;
    std::optional<T> named;
    if (v->is_string()) named = parse(v->template get_ref<const std::string&>());
    if (named) {
      *out = *named;
    } else {
      Fail(Path(key), expected, *v, v->is_string());
    }
  }
  // An object `key` read by `each(fields)`; false when absent or not one.
  template <typename Each>
  bool Member(std::string_view key, Each each) {
    const Json* v = Find(key);
    if (v == nullptr) return false;
    RecordFields r(*v, Path(key), error_, reading_);
    if (!r.Object()) return false;
    each(r);
    return true;
  }
  // An array `key`, each element an object read by `each(fields)`; one that
  // is not an object is the error (and left out when read leniently).
  template <typename Each>
  void Objects(std::string_view key, Each each) {
    const Json* v = Find(key);
    if (v == nullptr) return;
    if (!v->is_array()) return Fail(Path(key), "an array", *v);
    for (size_t i = 0; i < v->size() && (lenient() || error_->empty()); ++i) {
      RecordFields r((*v)[i], fmt::format("{}[{}]", Path(key), i), error_, reading_);
      if (r.Object()) each(r);
    }
  }
  // An object `key` of objects, each read by `each(name, fields)`.
  template <typename Each>
  void Members(std::string_view key, Each each) {
    const Json* v = Find(key);
    if (v == nullptr) return;
    if (!v->is_object()) return Fail(Path(key), "an object", *v);
    for (auto it = v->begin(); it != v->end() && (lenient() || error_->empty()); ++it) {
      RecordFields r(*it, Path(key) + "." + it.key(), error_, reading_);
      if (r.Object()) each(it.key(), r);
    }
  }
  // An array of strings `key`; an element of another type is the error.
  void Texts(std::string_view key, std::vector<std::string>* out) {
    const Json* v = Find(key);
    if (v == nullptr) return;
    if (!v->is_array()) return Fail(Path(key), "an array", *v);
    for (size_t i = 0; i < v->size(); ++i) {
      const Json& e = (*v)[i];
      if (e.is_string()) {
        out->push_back(e.template get<std::string>());
      } else {
        Fail(fmt::format("{}[{}]", Path(key), i), "a string", e);
      }
    }
  }
  // An object `key` of numbers, a null for one that was not finite.
  void Numbers(std::string_view key,
               std::vector<std::pair<std::string, std::optional<double>>>* out) {
    const Json* v = Find(key);
    if (v == nullptr) return;
    if (!v->is_object()) return Fail(Path(key), "an object", *v);
    for (auto it = v->begin(); it != v->end(); ++it) {
      if (it->is_number()) {
        out->emplace_back(it.key(), it->template get<double>());
      } else if (it->is_null()) {
        out->emplace_back(it.key(), std::nullopt);
      } else {
        return Fail(Path(key) + "." + it.key(), "a number or null", *it);
      }
    }
  }

  // "key at: expected <expected>, got <the value's kind>" (`show`: the value
  // itself), unless an error came before.
  void Fail(const std::string& at, std::string_view expected, const Json& got, bool show = false) {
    if (!error_->empty()) return;
    std::string what = show ? got.dump() : std::string(JsonKindName(got));
    *error_ = at.empty() ? fmt::format("expected {}, got {}", expected, what)
                         : fmt::format("key {}: expected {}, got {}", at, expected, what);
  }

 private:
  bool lenient() const { return reading_ == RecordReading::kKeepGoing; }
  template <typename T>
  void Set(std::string_view key, T* out,
           void (RecordFields::*read)(std::string_view, std::optional<T>*)) {
    std::optional<T> v;
    (this->*read)(key, &v);
    if (v) *out = *v;
  }
  std::optional<int64_t> WholeOf(const Json& v, const std::string& at) {
    if (v.is_number_integer() &&
        (!v.is_number_unsigned() ||
         v.template get<uint64_t>() <= uint64_t{std::numeric_limits<int64_t>::max()})) {
      return v.template get<int64_t>();
    }
    if (v.is_number_float()) {
      double d = v.template get<double>();
      if (d == std::floor(d) && std::fabs(d) < 9.2e18) return std::llround(d);
    }
    Fail(at, "a whole number", v, v.is_number());
    return std::nullopt;
  }

  const Json& j_;
  std::string at_;
  std::string* error_;
  RecordReading reading_;
};

}  // namespace tv
