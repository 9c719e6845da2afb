// DeferredGpuSource: a GpuSource opened off the caller's path. Loading the
// driver library, nvmlInit and enumerating the devices take about 80 ms on an
// H200 host; under `run` that time must not delay the command nor keep a
// short command's run open. The opening runs on its own thread (tv-nvml-open);
// until it is done a tick reads no GPU (rows simply lack GPUs). The tick that
// first finds it done says its notices and calls the on_ready callback with
// the static info (for meta.json). A source destroyed while the opening is
// still under way leaves the thread to close what it opens: nothing waits for
// a driver that is slow to initialise.
//
// Thread safety: Read, Flush and the callback on the sampler thread; WaitReady
// and ready() from any thread.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/source.h"
#include "sources/gpu_source.h"

namespace tv {

class DeferredGpuSource final : public Source {
 public:
  using ReadyFn = std::function<void(const nlohmann::json& static_info)>;

  // Starts opening NVML with `options` on a thread of its own and returns at
  // once; where no thread can be started, opens it before returning.
  explicit DeferredGpuSource(const GpuSourceOptions& options);
  ~DeferredGpuSource() override;
  DeferredGpuSource(const DeferredGpuSource&) = delete;
  DeferredGpuSource& operator=(const DeferredGpuSource&) = delete;

  std::string_view name() const override { return "gpu"; }
  void Read(const Tick& tick, Sample* out, std::vector<Notice>* notices) override;
  bool Flush(Sample* out) override;

  // Called once, on the sampler thread, at the first tick that finds GPUs
  // opened: static_info is GpuSource::static_info(). Not called without GPUs.
  void set_on_ready(ReadyFn fn) { on_ready_ = std::move(fn); }
  // Waits up to `timeout_s` for the opening to end (with or without GPUs).
  // True when it has ended.
  bool WaitReady(double timeout_s) const;
  // Openings whose thread is still inside the driver, in this process. A
  // process that ends while one is should leave with _exit: the driver's
  // static destructors must not run under that thread.
  static int OpeningsInFlight();
  // The static info once opened; null while opening or without GPUs.
  // After WaitReady returned true, from any thread; else the sampler thread.
  nlohmann::json static_info() const;

 private:
  struct Opening;  // shared with the opening thread
  // Takes over what the opening produced, once it has ended. True when GPUs are there.
  bool Adopt(std::vector<Notice>* notices);

  std::shared_ptr<Opening> opening_;
  std::unique_ptr<GpuSource> source_;  // adopted from the opening
  bool adopted_ = false;
  ReadyFn on_ready_;
};

}  // namespace tv
