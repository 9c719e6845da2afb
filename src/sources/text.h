// Text helpers shared by the /proc and /sys parsers: lines, whitespace-separated
// fields and numbers read with std::from_chars. They never throw and never
// allocate; a malformed number is absent, not zero.
//
// Thread safety: pure functions, safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tv::text {

// Removes the first line of *rest (up to and including '\n') and returns it
// without the '\n'. On an empty *rest returns an empty view.
std::string_view NextLine(std::string_view* rest);

// Skips leading blanks (space, tab, '\n', '\r') of *rest, then removes and
// returns the run of non-blank characters that follows; empty when none is left.
std::string_view NextField(std::string_view* rest);

// `s` without leading and trailing blanks.
std::string_view Trim(std::string_view s);

// The whole of `s` as an unsigned decimal (no sign, no blanks); absent when `s`
// is empty, has other characters or does not fit in 64 bits.
std::optional<uint64_t> ParseU64(std::string_view s);

// The whole of `s` as a signed decimal; absent as for ParseU64.
std::optional<int64_t> ParseI64(std::string_view s);

// The whole of `s` as a finite decimal floating-point number; absent otherwise.
std::optional<double> ParseDouble(std::string_view s);

// a * b, absent when it would overflow.
std::optional<uint64_t> CheckedMul(uint64_t a, uint64_t b);

}  // namespace tv::text
