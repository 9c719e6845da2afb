// GpuSource: the Source that reads GPUs through a GpuBackend (NVML today). It
// numbers devices as the training framework does (CUDA_VISIBLE_DEVICES), splits
// each GPU's compute processes into the job's and the others', and keeps going
// when a GPU is lost (one notice, then that GPU is no longer read).
//
// MIG: a slice is a GpuSample of its own with mig_instance set, sharing its
// GPU's index (the CUDA index of the GPU, or of the slice when
// CUDA_VISIBLE_DEVICES names the slice); the whole GPU is a sample too.
//
// Thread safety: Read on the sampler thread only; driver() and gpus() after Create.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/env.h"
#include "core/source.h"
#include "sources/gpu_backend.h"
#include "sources/pid_namespace.h"

namespace tv {

struct GpuSourceOptions {
  std::string nvml_library;  // empty: $TRAINVITALS_NVML_LIBRARY, else libnvidia-ml.so.1
  // CUDA_VISIBLE_DEVICES as the job will see it; nullopt when unset.
  std::optional<std::string> cuda_visible_devices;
  std::vector<int> gpus;       // watch only these CUDA indices; empty: every visible GPU
  bool real_ids = false;       // UUIDs and serials in gpus() instead of a short hash
  bool mig = true;             // watch MIG slices
  bool all_processes = false;  // keep every process's listing for ProcessesOf (top)
  // The whole node, no job (`serve`): the job's and the others' shares are
  // left absent; jobs take their parts from the process lists.
  bool node = false;
  Env* env = nullptr;  // for /proc/<pid>/status (NSpid) and comm; nullptr: Env::Default()

  // Defaults, with cuda_visible_devices from this process's environment.
  static GpuSourceOptions FromEnvironment();
};

class GpuSource final : public Source {
 public:
  // Opens NVML. Returns nullptr and appends one notice (for events.jsonl and
  // stderr) when there is no library, no driver, or no GPU to watch.
  static std::unique_ptr<GpuSource> Create(const GpuSourceOptions& options,
                                           std::vector<Notice>* notices);
  // Over a given backend (tests; a later vendor).
  static std::unique_ptr<GpuSource> Create(std::unique_ptr<GpuBackend> backend,
                                           const GpuSourceOptions& options,
                                           std::vector<Notice>* notices);

  std::string_view name() const override { return "gpu"; }
  void Read(const Tick& tick, Sample* out, std::vector<Notice>* notices) override;

  // For meta.json and `check`: the driver, and each watched unit in watch
  // order (the order of a tick's samples).
  const GpuDriverInfo& driver() const { return driver_; }
  const std::vector<GpuInfo>& gpus() const { return gpus_; }
  GpuBackend& backend() { return *backend_; }
  size_t watched() const { return watched_.size(); }
  // Every compute process the latest Read listed on the unit `uuid`, in the
  // driver's order, with its SM share when known: a sample keeps only the top
  // kGpuTopProcesses (`trainvitals top` lists them all). Empty when unknown
  // or not asked for (GpuSourceOptions::all_processes).
  std::vector<GpuProcess> ProcessesOf(std::string_view uuid) const;

 private:
  struct Watched {
    size_t unit = 0;  // index into backend units()
    int index = 0;    // CUDA index
    bool lost = false;
    // The latest per-process SM read, applied to every sample until the next.
    std::vector<GpuProcessUtil> last_utils;
    bool utils_known = false;
    std::vector<GpuProcessUse> processes;  // the latest list, whole (all_processes)
    // The compute-process list (about 0.23 ms a call on an H200, ticks apart)
    // is read again on row ticks and on ticks where the device's used memory
    // moved since the last read: no process gains, frees or ends without it.
    std::vector<GpuProcessUse> listed;
    bool listed_ok = false;
    bool listed_once = false;
    std::optional<double> listed_at_used;  // memory_used_bytes at that read
  };
  GpuSource(std::unique_ptr<GpuBackend> backend, Env* env)
      : backend_(std::move(backend)), env_(env), pids_(env) {}
  void Attribute(Watched& w, const Tick& tick, const std::vector<int>& job_pids, GpuSample* g);
  // /proc/<pid>/comm, read once per PID; empty when unreadable.
  const std::string& NameOf(int pid);

  std::unique_ptr<GpuBackend> backend_;
  Env* env_;
  std::vector<Watched> watched_;
  bool all_processes_ = false;
  bool node_ = false;
  GpuDriverInfo driver_;
  std::vector<GpuInfo> gpus_;
  PidMapper pids_;
  std::vector<GpuProcessUtil> utils_;
  std::vector<int> seen_pids_;
  std::unordered_map<int, std::string> names_;  // PIDs seen at the last row tick
};

// A short stable stand-in for a UUID ("gpu-" and 12 hex digits of FNV-1a), so
// runs can be compared per device without recording the device's identity.
std::string GpuIdHash(std::string_view uuid);

}  // namespace tv
