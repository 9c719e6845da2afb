// "Did you mean": which known word a mistyped one is probably a typo of. The
// one judge of nearness for every message that suggests a word (config keys,
// command-line options and commands, units, metric names), so they agree.
// Pure functions; safe from any thread.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace tv {

// Edits from `a` to `b`: insertions, deletions, substitutions, and a swap of
// two neighbours ("fro" for "for") counted as one.
size_t EditDistance(std::string_view a, std::string_view b);

// The word of `words` that `key` is probably a typo of: the nearest, when it
// is at most 2 edits away and those edits are fewer than half of `key` (so
// "ou" is no typo of "out"). Failing that, a word `key` cut short: the
// shortest word that begins with `key`, when `key` has at least 4 characters
// and is more than half of that word ("gpus[].util" for "gpus[].util_ratio").
// Empty when none is near; on a tie, the first.
std::string_view NearestWord(std::string_view key, std::span<const std::string_view> words);

}  // namespace tv
