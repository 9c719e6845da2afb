// Lenient reads of one key of a JSON object, for the record types that read
// the run directory back (src/store/): the value when the key is there and of
// the type asked for, else nullopt. A reader checks a file's shape once
// (json_shape.h) and names what is wrong; these only take what is usable.
// Thread-safe (pure functions).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tv {

template <typename J>
const J* JsonAt(const J& j, std::string_view key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

template <typename J>
std::optional<double> JsonNumber(const J& j, std::string_view key) {
  const J* v = JsonAt(j, key);
  if (v == nullptr || !v->is_number()) return std::nullopt;
  return v->template get<double>();
}

// A number that is a whole one (an integer, or a float with no fraction).
template <typename J>
std::optional<int64_t> JsonInt(const J& j, std::string_view key) {
  const J* v = JsonAt(j, key);
  if (v == nullptr || !v->is_number()) return std::nullopt;
  if (v->is_number_integer()) return v->template get<int64_t>();
  double d = v->template get<double>();
  if (!(d > -9.2e18 && d < 9.2e18) || d != static_cast<double>(static_cast<int64_t>(d))) {
    return std::nullopt;
  }
  return static_cast<int64_t>(d);
}

template <typename J>
std::optional<std::string> JsonString(const J& j, std::string_view key) {
  const J* v = JsonAt(j, key);
  if (v == nullptr || !v->is_string()) return std::nullopt;
  return v->template get<std::string>();
}

template <typename J>
std::optional<bool> JsonBool(const J& j, std::string_view key) {
  const J* v = JsonAt(j, key);
  if (v == nullptr || !v->is_boolean()) return std::nullopt;
  return v->template get<bool>();
}

// An array of strings; empty when absent or when any element is not a string.
template <typename J>
std::vector<std::string> JsonStrings(const J& j, std::string_view key) {
  std::vector<std::string> out;
  const J* v = JsonAt(j, key);
  if (v == nullptr || !v->is_array()) return out;
  for (const J& e : *v) {
    if (!e.is_string()) return {};
    out.push_back(e.template get<std::string>());
  }
  return out;
}

}  // namespace tv
