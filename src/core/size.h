// Sizes of memory as people write them on a command line: "40GiB", "8 GB",
// "1.5TiB", "512MiB", "4096" (bytes). Decimal units are powers of 1000 (KB,
// MB, GB, TB, PB, EB; K, M, G... alone too), binary units powers of 1024 (KiB,
// MiB, GiB, TiB, PiB, EiB; Ki, Mi...); case does not matter. Pure; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tv {

// The bytes `text` names, rounded to a whole byte. On a mistake, nothing, and
// `*error` says what is wrong and how to write it, suggesting the unit meant:
// `"2GBB" is not a size: unknown unit "GBB" (did you mean "GB"?); examples:
// 512MiB, 2GiB`.
std::optional<uint64_t> ParseSize(std::string_view text, std::string* error);

}  // namespace tv
