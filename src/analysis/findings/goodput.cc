#include "analysis/findings/goodput.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tv {
namespace {

double Round4(double v) { return std::round(v * 1e4) / 1e4; }

}  // namespace

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

nlohmann::ordered_json TimeLedger::Json(bool steps_measured) const {
  double total = Total();
  nlohmann::ordered_json out = {{"wall_s", Round4(total)}};
  if (steps_measured) out["productive_ratio"] = Round4(Share(Spent::kProductive));
  nlohmann::ordered_json seconds = nlohmann::ordered_json::object();
  nlohmann::ordered_json ratios = nlohmann::ordered_json::object();
  // Whole percents that add up to 100 (largest remainder), for the views.
  std::array<int, kSpentCount> percent{};
  std::array<double, kSpentCount> rest{};
  int given = 0;
  for (size_t i = 0; i < kSpentCount; ++i) {
    double exact = total > 0 ? seconds_[i] / total * 100 : 0;
    percent[i] = static_cast<int>(std::floor(exact));
    rest[i] = exact - percent[i];
    given += percent[i];
  }
  std::array<size_t, kSpentCount> order{};
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return rest[a] > rest[b]; });
  for (size_t k = 0; total > 0 && given < 100 && k < kSpentCount; ++k, ++given) ++percent[order[k]];
  nlohmann::ordered_json percents = nlohmann::ordered_json::object();
  for (size_t i = 0; i < kSpentCount; ++i) {
    std::string key(SpentName(static_cast<Spent>(i)));
    seconds[key] = Round4(seconds_[i]);
    ratios[key] = Round4(total > 0 ? seconds_[i] / total : 0);
    percents[key] = percent[i];
  }
  out["seconds"] = std::move(seconds);
  out["ratios"] = std::move(ratios);
  out["percent"] = std::move(percents);
  return out;
}

}  // namespace tv
