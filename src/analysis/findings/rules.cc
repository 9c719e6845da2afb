#include "analysis/findings/rules.h"

#include "analysis/findings/cpu_io_bound.h"
#include "analysis/findings/eval_heavy.h"
#include "analysis/findings/gpu_busy.h"
#include "analysis/findings/gpu_device.h"
#include "analysis/findings/gpu_held.h"
#include "analysis/findings/host_memory.h"
#include "analysis/findings/input_bound.h"
#include "analysis/findings/oom_rule.h"
#include "analysis/findings/straggler.h"
#include "analysis/findings/throughput_drop.h"

namespace tv {

RuleSet MakeRules(const Thresholds& th, RuleChoice choice) {
  RuleSet set;
  auto input = std::make_unique<InputBoundRule>(th);  // input-bound
  auto progress = std::make_unique<ProgressRule>();   // slow-start, stalled
  auto cpu = std::make_unique<CpuIoBoundRule>(th);    // cpu-bound, io-bound
  // low-gpu-util, batch-too-small, gpu-imbalance
  auto busy = std::make_unique<GpuBusyRules>(*input, *cpu);
  // host-memory-leak, gpu-memory-leak, allocator-growth, oom-forecast
  auto memory = std::make_unique<MemoryRules>(th);
  set.progress = progress.get();
  set.memory = memory.get();
  if (choice == RuleChoice::kAcrossNodes) {
    set.all.push_back(std::make_unique<StragglerRule>());
    set.all.push_back(std::move(busy));
    set.held.push_back(std::move(input));
    set.held.push_back(std::move(progress));
    set.held.push_back(std::move(cpu));
    set.held.push_back(std::move(memory));
    return set;
  }
  set.all.push_back(std::move(input));
  set.all.push_back(std::move(progress));
  set.all.push_back(std::make_unique<StragglerRule>());       // straggler
  set.all.push_back(std::make_unique<ThroughputDropRule>());  // throughput-drop
  set.all.push_back(std::make_unique<EvalHeavyRule>());       // eval-heavy
  set.all.push_back(std::move(cpu));
  set.all.push_back(std::make_unique<HostMemoryPressureRule>());  // host-memory-pressure
  set.all.push_back(std::make_unique<SwappingRule>());            // swapping
  set.all.push_back(std::make_unique<GpuHeldRule>());             // gpu-unused, gpu-idle
  set.all.push_back(std::make_unique<GpuMemoryFullRule>());       // gpu-memory-near-full
  set.all.push_back(std::make_unique<SharedGpuRule>());           // shared-gpu
  auto throttled = std::make_unique<ThrottledRule>(*busy);        // throttled
  set.all.push_back(std::move(busy));
  set.all.push_back(std::move(throttled));
  set.all.push_back(std::move(memory));
  set.all.push_back(std::make_unique<OomRule>());  // oom
  return set;
}

}  // namespace tv
