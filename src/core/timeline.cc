#include "core/timeline.h"

namespace tv {

void Timeline::OnRow(const Row& row) {
  std::lock_guard<std::mutex> lock(mu_);
  if (capacity_ == 0) return;
  if (rows_.size() == capacity_) {
    rows_.pop_front();
    ++evicted_;
  }
  rows_.push_back(row);
}

std::vector<Row> Timeline::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {rows_.begin(), rows_.end()};
}

size_t Timeline::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return rows_.size();
}

uint64_t Timeline::evicted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return evicted_;
}

}  // namespace tv
