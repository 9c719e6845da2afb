#include "sources/text.h"

#include <charconv>
#include <cmath>

namespace tv::text {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

template <typename T>
std::optional<T> ParseWhole(std::string_view s) {
  if (s.empty()) return std::nullopt;
  T value{};
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

}  // namespace

std::string_view NextLine(std::string_view* rest) {
  size_t nl = rest->find('\n');
  std::string_view line = rest->substr(0, nl);
  rest->remove_prefix(nl == std::string_view::npos ? rest->size() : nl + 1);
  return line;
}

std::string_view NextField(std::string_view* rest) {
  size_t i = 0;
  while (i < rest->size() && IsBlank((*rest)[i])) ++i;
  size_t j = i;
  while (j < rest->size() && !IsBlank((*rest)[j])) ++j;
  std::string_view field = rest->substr(i, j - i);
  rest->remove_prefix(j);
  return field;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsBlank(s.back())) s.remove_suffix(1);
  return s;
}

std::optional<uint64_t> ParseU64(std::string_view s) {
  // from_chars accepts no '+' and, for unsigned types, no '-'; it rejects overflow.
  return ParseWhole<uint64_t>(s);
}

std::optional<int64_t> ParseI64(std::string_view s) { return ParseWhole<int64_t>(s); }

std::optional<double> ParseDouble(std::string_view s) {
  std::optional<double> v = ParseWhole<double>(s);
  if (v && !std::isfinite(*v)) return std::nullopt;
  return v;
}

std::optional<uint64_t> CheckedMul(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

}  // namespace tv::text
