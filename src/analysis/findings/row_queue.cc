#include "analysis/findings/row_queue.h"

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace tv {
namespace {

constexpr size_t kRowsAhead = 32;  // rows parsed ahead of the judge, per node
// Each side wakes the other only past a margin, not at every row: the judge,
// waiting on an empty queue, once kWakeRows are ready; the reader, waiting on
// a full one, once the judge has taken kWakeRows. A wake costs two context
// switches, more than parsing a small row.
constexpr size_t kWakeRows = 16;

}  // namespace

struct RowQueue::Impl {
  RowReader reader;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Frame> ready;    // parsed, in file order
  std::vector<Frame> spare;   // judged frames back for reuse: their vectors keep their capacity
  bool done = false;          // the reader has read its last row
  bool stop = false;          // the queue is going away
  bool judge_waits = false;   // Next waits for rows
  bool reader_waits = false;  // Read waits for room
  std::exception_ptr error;
  std::thread thread;

  Impl(const std::string& run_dir, Verdict* v) : reader(run_dir, v) {}

  void Read() {
    Frame frame;
    while (true) {
      bool more = false;
      try {
        more = reader.Next(&frame);
      } catch (...) {
        std::lock_guard lock(mu);
        error = std::current_exception();
      }
      std::unique_lock lock(mu);
      if (!more) {
        done = true;
        cv.notify_all();
        return;
      }
      if (ready.size() >= kRowsAhead) {
        reader_waits = true;
        cv.wait(lock, [&] { return ready.size() + kWakeRows <= kRowsAhead || stop; });
        reader_waits = false;
      }
      if (stop) return;
      ready.push_back(std::move(frame));
      frame = Frame{};
      if (!spare.empty()) {
        frame = std::move(spare.back());
        spare.pop_back();
      }
      if (judge_waits && ready.size() >= kWakeRows) cv.notify_all();
    }
  }
};

RowQueue::RowQueue(const std::string& run_dir, Verdict* v)
    : impl_(std::make_unique<Impl>(run_dir, v)) {
  impl_->thread = std::thread([impl = impl_.get()] { impl->Read(); });
}

RowQueue::~RowQueue() {
  {
    std::lock_guard lock(impl_->mu);
    impl_->stop = true;
  }
  impl_->cv.notify_all();
  impl_->thread.join();
}

bool RowQueue::Next(Frame* frame) {
  Impl& m = *impl_;
  std::unique_lock lock(m.mu);
  if (m.ready.empty() && !m.done) {
    m.judge_waits = true;
    m.cv.wait(lock, [&] { return m.ready.size() >= kWakeRows || m.done; });
    m.judge_waits = false;
  }
  if (m.ready.empty()) {
    if (m.error) std::rethrow_exception(m.error);
    return false;
  }
  std::swap(*frame, m.ready.front());
  m.spare.push_back(std::move(m.ready.front()));
  m.ready.pop_front();
  if (m.reader_waits && m.ready.size() + kWakeRows <= kRowsAhead) m.cv.notify_all();
  return true;
}

}  // namespace tv
