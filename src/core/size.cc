#include "core/size.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>

#include "core/near.h"

namespace tv {
namespace {

constexpr std::string_view kExamples = "examples: 512MiB, 2GiB";

struct Unit {
  std::string_view name;  // as written in messages
  double bytes;
};
// The units suggested and listed; each is also taken without its "B".
constexpr std::array<Unit, 13> kUnits = {{
    {"B", 1},
    {"KB", 1e3},
    {"MB", 1e6},
    {"GB", 1e9},
    {"TB", 1e12},
    {"PB", 1e15},
    {"EB", 1e18},
    {"KiB", 1024.0},
    {"MiB", 1024.0 * 1024},
    {"GiB", 1024.0 * 1024 * 1024},
    {"TiB", 1024.0 * 1024 * 1024 * 1024},
    {"PiB", 1024.0 * 1024 * 1024 * 1024 * 1024},
    {"EiB", 1024.0 * 1024 * 1024 * 1024 * 1024 * 1024},
}};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Bytes per `unit` (any case, "B" optional but for bytes themselves); nothing
// when it is no unit.
std::optional<double> UnitBytes(std::string_view unit) {
  std::string u = Lower(unit);
  if (u.empty()) return 1.0;
  for (const Unit& known : kUnits) {
    std::string name = Lower(known.name);
    if (u == name || (name.size() > 1 && u == name.substr(0, name.size() - 1))) return known.bytes;
  }
  return std::nullopt;
}

std::string UnknownUnit(std::string_view text, std::string_view unit) {
  std::array<std::string, kUnits.size()> lower;
  std::array<std::string_view, kUnits.size()> words;
  for (size_t i = 0; i < kUnits.size(); ++i) words[i] = lower[i] = Lower(kUnits[i].name);
  std::string typed = Lower(unit);
  std::string_view near = NearestWord(typed, words);
  for (size_t i = 0; i < kUnits.size() && !near.empty(); ++i) {
    if (words[i].data() != near.data()) continue;
    return fmt::format("\"{}\" is not a size: unknown unit \"{}\" (did you mean \"{}\"?); {}", text,
                       unit, kUnits[i].name, kExamples);
  }
  std::string names;
  for (const Unit& u : kUnits) names += fmt::format("{}{}", names.empty() ? "" : ", ", u.name);
  return fmt::format("\"{}\" is not a size: unknown unit \"{}\" (units: {}); {}", text, unit, names,
                     kExamples);
}

}  // namespace

std::optional<uint64_t> ParseSize(std::string_view text, std::string* error) {
  std::string_view t = Trim(text);
  if (t.empty()) {
    *error = fmt::format("no size given; {}", kExamples);
    return std::nullopt;
  }
  if (t.front() == '-') {
    *error = fmt::format("\"{}\" is not a size: it is negative", text);
    return std::nullopt;
  }
  size_t digits = 0;
  while (digits < t.size() &&
         (std::isdigit(static_cast<unsigned char>(t[digits])) || t[digits] == '.')) {
    ++digits;
  }
  std::string_view number = t.substr(0, digits);
  std::string_view unit = Trim(t.substr(digits));
  if (number.empty()) {
    *error =
        fmt::format("\"{}\" is not a size: it does not start with a number; {}", text, kExamples);
    return std::nullopt;
  }
  double value = 0;
  auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (ec != std::errc() || end != number.data() + number.size() || !std::isfinite(value)) {
    *error =
        fmt::format("\"{}\" is not a size: \"{}\" is not a number; {}", text, number, kExamples);
    return std::nullopt;
  }
  std::optional<double> per_unit = UnitBytes(unit);
  if (!per_unit) {
    *error = UnknownUnit(text, unit);
    return std::nullopt;
  }
  double bytes = std::round(value * *per_unit);
  // 2^64: the first double a uint64_t cannot hold.
  if (bytes >= 18446744073709551616.0) {
    *error = fmt::format("\"{}\" is too large a size: 16EiB or more", text);
    return std::nullopt;
  }
  return static_cast<uint64_t>(bytes);
}

}  // namespace tv
