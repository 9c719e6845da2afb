#include "sources/named_counters.h"

namespace tv {

std::optional<NamedCounters::Values> NamedCounters::Update(std::string_view name, Values values) {
  auto it = entries_.find(name);
  if (it == entries_.end()) {
    entries_.emplace(std::string(name), Entry{values, round_});
    return std::nullopt;
  }
  Entry& e = it->second;
  bool continuous = e.round + 1 == round_;
  std::optional<Values> delta;
  if (continuous && values[0] >= e.values[0] && values[1] >= e.values[1]) {
    delta = Values{values[0] - e.values[0], values[1] - e.values[1]};
  }
  e = Entry{values, round_};
  return delta;
}

}  // namespace tv
