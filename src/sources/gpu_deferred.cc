#include "sources/gpu_deferred.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>

#include "core/thread.h"

namespace tv {
namespace {

std::atomic<int> g_in_flight{0};

}  // namespace

int DeferredGpuSource::OpeningsInFlight() { return g_in_flight.load(); }

struct DeferredGpuSource::Opening {
  mutable std::mutex mu;
  mutable std::condition_variable cv;
  bool done = false;
  bool abandoned = false;  // the source is gone: the thread frees what it opened
  std::unique_ptr<GpuSource> source;
  nlohmann::json static_info;  // a copy, readable from any thread once done
  std::vector<Notice> notices;
};

DeferredGpuSource::DeferredGpuSource(const GpuSourceOptions& options)
    : opening_(std::make_shared<Opening>()) {
  std::shared_ptr<Opening> opening = opening_;
  g_in_flight.fetch_add(1);
  auto open = [opening, options] {
    std::unique_ptr<GpuSource> source;
    std::vector<Notice> notices;
    RunGuarded("opening the GPU driver", "GPU metrics off, host metrics go on",
               [&] { source = GpuSource::Create(options, &notices); });
    std::unique_lock<std::mutex> lock(opening->mu);
    opening->done = true;
    if (!opening->abandoned) {
      if (source) opening->static_info = source->static_info();
      opening->source = std::move(source);
      opening->notices = std::move(notices);
    }
    opening->cv.notify_all();
    lock.unlock();
    // When abandoned, `source` (nvmlShutdown, dlclose) is freed here, on this thread.
    source.reset();
    g_in_flight.fetch_sub(1);
  };
  try {
    std::thread([open] {
      NameThisThread("tv-nvml-open");
      open();
    }).detach();
  } catch (const std::system_error&) {
    open();  // no thread to be had (a pids limit): open here, as the caller's time allows
  }
}

DeferredGpuSource::~DeferredGpuSource() {
  std::lock_guard<std::mutex> lock(opening_->mu);
  opening_->abandoned = true;
  opening_->source.reset();  // already done: freed here; else by the opening thread
}

bool DeferredGpuSource::WaitReady(double timeout_s) const {
  std::unique_lock<std::mutex> lock(opening_->mu);
  return opening_->cv.wait_for(lock, std::chrono::duration<double>(timeout_s),
                               [&] { return opening_->done; });
}

nlohmann::json DeferredGpuSource::static_info() const {
  std::lock_guard<std::mutex> lock(opening_->mu);
  return opening_->static_info;
}

bool DeferredGpuSource::Adopt(std::vector<Notice>* notices) {
  if (adopted_) return source_ != nullptr;
  {
    std::unique_lock<std::mutex> lock(opening_->mu, std::try_to_lock);
    if (!lock.owns_lock() || !opening_->done) return false;
    source_ = std::move(opening_->source);
    for (Notice& n : opening_->notices) notices->push_back(std::move(n));
    opening_->notices.clear();
  }
  adopted_ = true;
  if (source_ && on_ready_) on_ready_(source_->static_info());
  return source_ != nullptr;
}

void DeferredGpuSource::Read(const Tick& tick, Sample* out, std::vector<Notice>* notices) {
  if (!Adopt(notices)) return;
  source_->Read(tick, out, notices);
}

bool DeferredGpuSource::Flush(Sample* out) { return source_ ? source_->Flush(out) : false; }

}  // namespace tv
