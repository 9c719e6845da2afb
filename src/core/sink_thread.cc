#include "core/sink_thread.h"

#include <fmt/format.h>

#include "core/thread.h"

namespace tv {

SinkThread::SinkThread(std::vector<Sink*> sinks)
    : sinks_(std::move(sinks)), failed_(sinks_.size(), false) {}

SinkThread::~SinkThread() { Close(); }

void SinkThread::Start() {
  thread_ = StartThread("tv-sinks", "rows and events are no longer written", [this] { Loop(); });
}

bool SinkThread::PushRow(Row row) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closing_ || queued_rows_ >= kMaxRows || queue_.size() >= kMaxItems) {
      dropped_rows_.fetch_add(1);
      return false;
    }
    queue_.emplace_back(std::move(row));
    ++queued_rows_;
  }
  cv_.notify_one();
  return true;
}

bool SinkThread::PushEvent(Event event) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closing_ || queue_.size() >= kMaxItems) return false;
    queue_.emplace_back(std::move(event));
  }
  cv_.notify_one();
  return true;
}

void SinkThread::Loop() {
  for (;;) {
    std::variant<Row, Event> item;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return closing_ || !queue_.empty(); });
      if (queue_.empty()) break;  // closing and drained
      item = std::move(queue_.front());
      queue_.pop_front();
      if (std::holds_alternative<Row>(item)) --queued_rows_;
    }
    if (const Row* row = std::get_if<Row>(&item)) {
      Each([row](Sink* s) { s->OnRow(*row); });
    } else {
      const Event& event = std::get<Event>(item);
      Each([&event](Sink* s) { s->OnEvent(event); });
    }
  }
  Each([](Sink* s) { s->OnClose(); });
}

void SinkThread::Each(const std::function<void(Sink*)>& call) {
  for (size_t i = 0; i < sinks_.size(); ++i) {
    if (failed_[i]) continue;
    try {
      call(sinks_[i]);
    } catch (...) {
      // One sink's fault turns off that sink only.
      failed_[i] = true;
      fmt::print(stderr, "trainvitals: an output failed ({}): it is turned off, the others go on\n",
                 CurrentExceptionText());
    }
  }
}

void SinkThread::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;  // a second Close only joins again, which is a no-op
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

}  // namespace tv
