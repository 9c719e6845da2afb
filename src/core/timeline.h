// Timeline: the run's recent history, bounded: the last `capacity` rows (at
// 1 s a row, an hour by default), for analysis and views that look back
// (leaks, trends, the report). Fed as a Sink on the sink thread; read from any
// thread through Snapshot.
//
// Thread safety: all methods are safe from any thread.
#pragma once

#include <deque>
#include <mutex>
#include <vector>

#include "core/sink.h"

namespace tv {

class Timeline final : public Sink {
 public:
  explicit Timeline(size_t capacity = 3600) : capacity_(capacity) {}
  void OnRow(const Row& row) override;
  // The rows held, oldest first.
  std::vector<Row> Snapshot() const;
  size_t size() const;
  // Rows dropped from the front to stay within capacity.
  uint64_t evicted() const;

 private:
  const size_t capacity_;
  mutable std::mutex mu_;
  std::deque<Row> rows_;
  uint64_t evicted_ = 0;
};

}  // namespace tv
