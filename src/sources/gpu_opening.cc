#include "sources/gpu_opening.h"

#include <chrono>
#include <system_error>
#include <thread>
#include <utility>

#include "core/thread.h"

namespace tv {

std::atomic<int> GpuOpening::in_flight_{0};

std::shared_ptr<GpuOpening> GpuOpening::Start(GpuSourceOptions options) {
  auto opening = std::make_shared<GpuOpening>(std::move(options));
  in_flight_.fetch_add(1);
  try {
    std::thread([self = opening]() mutable {
      NameThisThread("tv-gpu-open");
      self->OpenGuarded();
      // The last reference may be this one (nobody waits any more): the source
      // is closed here, before the count says this thread is done.
      self.reset();
      in_flight_.fetch_sub(1);
    }).detach();
  } catch (const std::system_error&) {
    // No thread to be had (a container at its pids limit): opened here.
    in_flight_.fetch_sub(1);
    opening->OpenGuarded();
  }
  return opening;
}

void GpuOpening::OpenGuarded() {
  RunGuarded("opening the GPU driver", "GPUs are not monitored", [this] { Open(); });
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
  }
  answered_.notify_all();
}

void GpuOpening::Open() {
  std::vector<Notice> notices;
  std::unique_ptr<GpuSource> source = GpuSource::Create(options_, &notices);
  std::lock_guard<std::mutex> lock(mu_);
  source_ = std::move(source);
  notices_ = std::move(notices);
}

bool GpuOpening::Wait(const std::function<bool()>& give_up) {
  std::unique_lock<std::mutex> lock(mu_);
  while (!done_) {
    if (answered_.wait_for(lock, std::chrono::milliseconds(2), [this] { return done_; })) break;
    lock.unlock();
    bool stop = give_up();
    lock.lock();
    if (stop) return done_;
  }
  return true;
}

std::unique_ptr<GpuSource> GpuOpening::Take(std::vector<Notice>* notices) {
  std::lock_guard<std::mutex> lock(mu_);
  for (Notice& n : notices_) notices->push_back(std::move(n));
  notices_.clear();
  return std::move(source_);
}

}  // namespace tv
