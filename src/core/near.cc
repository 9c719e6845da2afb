#include "core/near.h"

#include <algorithm>
#include <vector>

namespace tv {

size_t EditDistance(std::string_view a, std::string_view b) {
  // Optimal string alignment: two neighbours swapped ("fro" for "for") is one edit.
  std::vector<size_t> before(b.size() + 1), prev(b.size() + 1), row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      row[j] =
          std::min({prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        row[j] = std::min(row[j], before[j - 2] + 1);
      }
    }
    std::swap(before, prev);
    std::swap(prev, row);
  }
  return prev[b.size()];
}

std::string_view NearestWord(std::string_view key, std::span<const std::string_view> words) {
  std::string_view best;
  size_t best_distance = 0;
  for (std::string_view w : words) {
    size_t d = EditDistance(key, w);
    if (best.empty() || d < best_distance) {
      best = w;
      best_distance = d;
    }
  }
  // A typo, not another word: at most 2 edits, and fewer than half the key.
  if (!best.empty() && best_distance <= 2 && best_distance * 2 < key.size()) return best;
  // A word cut short: most of it typed, and enough of it to tell it apart.
  std::string_view cut;
  for (std::string_view w : words) {
    if (key.size() >= 4 && key.size() * 2 > w.size() && w.starts_with(key) &&
        (cut.empty() || w.size() < cut.size())) {
      cut = w;
    }
  }
  return cut;
}

}  // namespace tv
