#include "analysis/findings/goodput.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "analysis/findings/format.h"

namespace tv {

double TimeLedger::Total() const { return std::accumulate(seconds_.begin(), seconds_.end(), 0.0); }

double TimeLedger::Share(Spent s) const {
  double total = Total();
  return total > 0 ? (*this)[s] / total : 0;
}

double TimeLedger::LostShare() const {
  double lost = 0;
  for (size_t i = 0; i < kSpentCount; ++i) {
    if (SpentLost(static_cast<Spent>(i))) lost += Share(static_cast<Spent>(i));
  }
  return lost;
}

GoodputRecord TimeLedger::Record(bool steps_measured) const {
  double total = Total();
  GoodputRecord out;
  out.wall_s = Round4(total);
  if (steps_measured) out.productive_ratio = Round4(Share(Spent::kProductive));
  // Whole percents that add up to 100 (largest remainder), for the views.
  std::array<double, kSpentCount> rest{};
  int given = 0;
  for (size_t i = 0; i < kSpentCount; ++i) {
    double exact = total > 0 ? seconds_[i] / total * 100 : 0;
    out.percent[i] = static_cast<int>(std::floor(exact));
    rest[i] = exact - out.percent[i];
    given += out.percent[i];
    out.seconds[i] = Round4(seconds_[i]);
    out.ratios[i] = Round4(total > 0 ? seconds_[i] / total : 0);
  }
  std::array<size_t, kSpentCount> order{};
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return rest[a] > rest[b]; });
  for (size_t k = 0; total > 0 && given < 100 && k < kSpentCount; ++k, ++given) {
    ++out.percent[order[k]];
  }
  return out;
}

}  // namespace tv
