#include "sources/gpu_probe.h"

#include <chrono>
#include <thread>

#include "core/metrics.h"
#include "sources/nvml/nvml_backend.h"

namespace tv {

nlohmann::json ProbeGpus(const GpuSourceOptions& options, double gpm_wait_s) {
  nlohmann::json out;
  nlohmann::json& nvml = out["nvml"];
  nvml["library"] = NvmlLib::LibraryPath(options.nvml_library);
  Status status;
  std::string detail;
  std::unique_ptr<NvmlBackend> backend =
      NvmlBackend::Open(NvmlOptions{options.nvml_library, options.mig}, &status, &detail);
  // "found": the library loaded (dlopen gave no error); "usable": NVML
  // initialised and has GPUs.
  nvml["found"] = backend != nullptr || status.code() != Status::Code::kNotFound || detail.empty();
  nvml["usable"] = backend != nullptr;
  if (backend == nullptr) {
    nvml["error"] = status.message();
    if (!detail.empty()) nvml["detail"] = detail;
    out["gpus"] = nlohmann::json::array();
    return out;
  }
  if (!status.ok()) nvml["error"] = status.message();

  std::vector<Notice> notices;
  std::unique_ptr<GpuSource> source = GpuSource::Create(std::move(backend), options, &notices);
  if (source == nullptr) {
    for (const Notice& n : notices) nvml["error"] = n.message;
    out["gpus"] = nlohmann::json::array();
    return out;
  }
  nlohmann::ordered_json driver = GpuDriverJson(source->driver());
  for (auto& [key, value] : driver.items()) out[key] = value;
  Sample sample;
  auto start = std::chrono::steady_clock::now();
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1) std::this_thread::sleep_for(std::chrono::duration<double>(gpm_wait_s));
    Tick tick;
    tick.row_tick = true;
    tick.mono_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    sample.gpus.clear();
    source->Read(tick, &sample, &notices);
  }
  nlohmann::json gpus = nlohmann::json::array();
  for (const GpuInfo& info : source->gpus()) {
    nlohmann::json g = GpuInfoJson(info);
    // The source's units are in watch order, as are the samples of a tick
    // (lost units drop out of both the samples and the support table).
    for (size_t u = 0; u < source->backend().units().size(); ++u) {
      const GpuUnit& unit = source->backend().units()[u];
      if (unit.physical_index == info.physical_index && unit.mig_instance == info.mig_instance) {
        g["supports"] = source->backend().Support(u);
      }
    }
    nlohmann::json values = nlohmann::json::object();
    for (const GpuSample& s : sample.gpus) {
      if (s.index != info.index || s.mig_instance != info.mig_instance) continue;
      for (const MetricDef& m : GpuMetrics()) {
        if (auto v = m.get_gpu(s)) values[std::string(m.name)] = *v;
      }
    }
    g["values"] = std::move(values);
    gpus.push_back(std::move(g));
  }
  out["gpus"] = std::move(gpus);
  nlohmann::json problems = nlohmann::json::array();
  for (const Notice& n : notices) problems.push_back(n.source + ": " + n.message);
  if (!problems.empty()) out["problems"] = std::move(problems);
  return out;
}

}  // namespace tv
