#include "analysis/findings/table.h"

#include <fmt/format.h>

#include <cmath>
#include <string_view>
#include <vector>

#include "core/near.h"

namespace tv {
namespace {

// The one [findings] entry that is a list: the findings a profile is taken on.
constexpr std::string_view kProfileOn = "profile_on";

using F = FindingId;

// Rules name their thresholds in {braces}; FindingsMarkdown shows them with values.
constexpr FindingDef kFindings[] = {
    {F::kInputBound, "input-bound",
     "In training, the share of step time the training processes spent waiting for their next "
     "batch (`training.data_wait_ratio`, over {window_s}) is at least {input_bound_ratio} "
     "(warning from {input_bound_high_ratio}).",
     "Load batches ahead of the GPU: more loader workers, prefetching, and caching decoded data.",
     "tf.data: `dataset.map(f, num_parallel_calls=tf.data.AUTOTUNE)`, "
     "`.cache()` after the expensive map, and end with `.prefetch(tf.data.AUTOTUNE)`; "
     "a Python generator cannot run in parallel: turn it into a `tf.data` pipeline or a "
     "`keras.utils.PyDataset` with `workers=` and `use_multiprocessing=True`.",
     "`DataLoader(num_workers=N, pin_memory=True, persistent_workers=True, prefetch_factor=4)` "
     "with N up to the CPU cores you have; move decoding and augmentation out of the "
     "training loop.",
     "Raise the DataLoaders' `num_workers` (with `persistent_workers=True`, "
     "`pin_memory=True`); Lightning's own num_workers warning is the same cause, now measured.",
     "`paddle.io.DataLoader(num_workers=N, use_shared_memory=True)`, and a larger "
     "`prefetch_factor`."},
    {F::kCpuBound, "cpu-bound",
     "Over {window_s}, in more than {cpu_bound_share} of the rows a GPU the job uses is below "
     "{cpu_bound_gpu_ratio} busy while the job's CPU is above {cpu_bound_cpu_ratio} of the "
     "cores it may use.",
     "The CPU cannot keep the GPU fed: move preprocessing to the GPU or to fewer, cheaper "
     "operations, or run on a machine with more cores for this GPU.",
     "Run augmentation on the GPU (Keras preprocessing layers inside the model), "
     "`tf.data` with `num_parallel_calls=tf.data.AUTOTUNE`, and check that the model runs "
     "on the GPU, not the CPU.",
     "Do augmentation on the GPU (torchvision.transforms.v2 on CUDA tensors), keep "
     "`num_workers` below the cores available, and check that the model and batches are on "
     "`cuda`.",
     "Check `accelerator=\"gpu\"` and that batches reach the GPU; move augmentation to the GPU.",
     "Check `paddle.set_device(\"gpu\")`; move augmentation into the model or onto the GPU."},
    {F::kIoBound, "io-bound",
     "Over {window_s}, in more than {cpu_bound_share} of the rows a GPU the job uses is below "
     "{io_bound_gpu_ratio} busy while the CPUs wait for storage (iowait) more than "
     "{io_bound_iowait_ratio} of the time.",
     "The job waits for storage: copy the dataset to local disk or memory, use larger files "
     "(shards) read sequentially, and read ahead.",
     "`tf.data.TFRecordDataset(files, num_parallel_reads=tf.data.AUTOTUNE)` and "
     "`.cache()` (to memory or a local file).",
     "Shard the dataset into larger files, copy it to local NVMe, and raise `num_workers` "
     "so reads overlap.",
     "", ""},
    {F::kGpuIdle, "gpu-idle",
     "A GPU the job holds memory on, after being used, stays below {gpu_idle_ratio} busy for "
     "{gpu_idle_s} outside evaluation.",
     "The job holds the GPU but does not use it: check for a hang, a long CPU-only stage, or "
     "a job that should have ended and free the GPU for others.",
     "", "", "", ""},
    {F::kGpuUnused, "gpu-unused",
     "A GPU the job holds memory on is never busy (below {gpu_idle_ratio}) from the moment it "
     "took the memory, for {gpu_unused_s} or the whole judged run.",
     "The job took GPU memory but never computed there: is the model on the GPU? Run on a "
     "smaller GPU (a MIG slice) or on the CPU.",
     "Check `tf.config.list_physical_devices('GPU')` and that the model is built under the "
     "default (GPU) device.",
     "Move the model and each batch to the device: `model.to('cuda')`, "
     "`batch.to('cuda', non_blocking=True)`.",
     "Pass `accelerator=\"gpu\", devices=...` to the Trainer.",
     "Call `paddle.set_device(\"gpu\")` before building the model."},
    {F::kLowGpuUtil, "low-gpu-util",
     "In training, a GPU the job uses averages below {low_gpu_util_ratio} busy over "
     "{low_gpu_util_window_s} (warning below {low_gpu_util_red_ratio}).",
     "The GPU is mostly waiting: see the other findings for why (input, CPU, small batches); "
     "larger batches and mixed precision raise the work per launch.",
     "Raise the batch size, use `keras.mixed_precision.set_global_policy(\"mixed_float16\")` "
     "and `jit_compile=True` in `model.compile`.",
     "Raise the batch size, use `torch.autocast(\"cuda\", dtype=torch.bfloat16)` and "
     "`torch.compile(model)`.",
     "Raise the batch size, `Trainer(precision=\"bf16-mixed\")`.",
     "Raise the batch size, `paddle.amp.auto_cast()`."},
    {F::kGpuImbalance, "gpu-imbalance",
     "Over {window_s}, a GPU the job uses is busy less than {imbalance_score} of the busiest "
     "one's share, at least {imbalance_gap} below it.",
     "The GPUs do uneven work: check the data split per rank, uneven batch sizes, or one rank "
     "that does extra work (logging, checkpoints, evaluation) on its GPU.",
     "", "Use `DistributedSampler` with `drop_last=True` so each rank gets the same batches.", "",
     ""},
    {F::kStraggler, "straggler",
     "With more than one rank, over {window_s}, a rank's step rate is below {straggler_score} "
     "of the fastest rank's, or its data-wait share is {straggler_wait_gap} above the others' "
     "median (it makes them wait for it).",
     "One rank holds the others back: look at its host, its GPU and its data loading.", "", "", "",
     ""},
    {F::kThroughputDrop, "throughput-drop",
     "In training, the median step rate over {window_s} falls below {throughput_drop_ratio} of "
     "the run's best such median so far and stays there for {open_s} (rows without a step are "
     "stalled's, not counted); it closes when the rate is back above it.",
     "Something changed when the rate fell: look at the findings opened then (input, memory, "
     "throttling, a shared GPU), at the profile taken at that moment, and at what the script "
     "changes as it goes (a curriculum, longer sequences, a larger model stage).",
     "", "", "", ""},
    {F::kThrottled, "throttled",
     "Over {window_s}, a busy GPU's clocks are held down (power cap, heat or hardware "
     "slowdown) more than {throttle_share} of the time.",
     "The GPU runs below its clocks: check cooling, the power cap (`nvidia-smi -q -d "
     "POWER`) and the other jobs on the node.",
     "", "", "", ""},
    {F::kHostMemoryPressure, "host-memory-pressure",
     "The job's memory (PSS) reaches {host_memory_ratio} of its limit (the cgroup's or the "
     "host's), critical from {host_memory_critical_ratio}.",
     "The job is close to being killed for memory: fewer loader workers or prefetched "
     "batches, or memory-mapped data instead of in-process copies.",
     "Lower `prefetch` buffers and `shuffle` buffer sizes; avoid `.cache()` to memory for "
     "large datasets.",
     "Fewer `num_workers` or a smaller `prefetch_factor`; keep the dataset in numpy arrays, "
     "not Python lists (workers copy what they touch).",
     "", ""},
    {F::kSwapping, "swapping",
     "Over {window_s}, the host's swap use grows faster than {swap_bytes_per_second}.",
     "The host is swapping: training slows by orders of magnitude. Use less memory per "
     "process or fewer processes.",
     "", "", "", ""},
    {F::kGpuMemoryNearFull, "gpu-memory-near-full",
     "A GPU the job uses has its memory at least {gpu_memory_full_ratio} full (row peak) for "
     "{open_s}.",
     "Close to CUDA out of memory: mixed precision, gradient checkpointing, or a smaller "
     "batch with gradient accumulation.",
     "`keras.mixed_precision.set_global_policy(\"mixed_float16\")`; by default TensorFlow "
     "reserves most GPU memory up front: `tf.config.experimental.set_memory_growth` shows "
     "the real need.",
     "`torch.autocast`, `torch.utils.checkpoint`, and "
     "`PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` against fragmentation.",
     "`Trainer(precision=\"bf16-mixed\", accumulate_grad_batches=k)` with a smaller batch.",
     "`paddle.amp.auto_cast()` and a smaller batch."},
    {F::kBatchTooSmall, "batch-too-small",
     "In training, a GPU the job uses is busy between {low_gpu_util_ratio} and "
     "{batch_small_ratio} over {low_gpu_util_window_s} and over its last {window_s}, its "
     "memory and the job's CPU stay below {batch_small_ratio}, for {open_s}; not when the "
     "input (data wait at least {input_bound_ratio}) or the job's other GPUs "
     "(gpu-imbalance) explain it.",
     "The GPU has room to spare: a larger batch (scaling the learning rate) or mixed "
     "precision does more per step.",
     "Raise `batch_size` and use mixed precision.",
     "Raise the DataLoader's `batch_size` and use `torch.autocast`.",
     "Raise the batch size; `Tuner(trainer).scale_batch_size(model)` finds the largest "
     "that fits.",
     "Raise `batch_size` and use `paddle.amp.auto_cast()`."},
    {F::kEvalHeavy, "eval-heavy",
     "Evaluation takes at least {eval_share} of an epoch's time (warning from "
     "{eval_share_high}).",
     "Evaluate less often or on a subset: evaluation does not train the model.",
     "`model.fit(..., validation_freq=k)` or `validation_steps=`.",
     "Evaluate every k epochs or on a fixed subset of the validation set.",
     "`Trainer(check_val_every_n_epoch=k, limit_val_batches=0.25)`.",
     "Pass `eval_freq=k` to `Model.fit`."},
    {F::kStalled, "stalled",
     "A training process that was stepping makes no step for {stalled_s} or {stalled_factor}× "
     "its median step time, whichever is longer, while it lives and outside evaluation.",
     "The training stopped making progress. Each training process that offers its Python "
     "stacks (the Python package's callbacks and monitor() do) writes them to the run "
     "directory's `stacks/`, and the finding names the place each waits: a collective (with "
     "where the other ranks are, and how to make a lost rank fail instead of hanging), its "
     "data loader, a lock, I/O, a sleep or running code, with advice for that place. Without "
     "stacks it names the command that shows them (`py-spy dump --pid PID`).",
     "", "", "", ""},
    {F::kSlowStart, "slow-start",
     "A training process connected but no first step comes within {slow_start_s}.",
     "Start-up is slow: data indexing, downloads or compilation before the first step. Cache "
     "what start-up computes.",
     "", "", "", ""},
    {F::kSharedGpu, "shared-gpu",
     "Processes outside the job use a GPU the job uses, for {open_s} (warning when they "
     "hold at least {shared_memory_share} of its memory).",
     "Another job shares this GPU: its kernels and memory slow and endanger this one. Ask for "
     "exclusive GPUs or set the GPU to exclusive-process mode.",
     "", "", "", ""},
    {F::kHostMemoryLeak, "host-memory-leak",
     "After {leak_warmup_s} (or the first epoch), the floors of the job's memory (the "
     "anonymous and shared-memory part of the whole process tree's PSS, "
     "`job.memory_anon_pss_bytes`, where the kernel has it (Linux 5.10 on), else its PSS, "
     "`job.memory_bytes`) or of a training process's memory, one per epoch (else one per "
     "{leak_window_s}), rise: at least {leak_min_floors} floors, a Mann-Kendall "
     "test significant at {leak_p_value}, a Theil-Sen slope that adds at least "
     "{leak_min_growth} over them, and the newer half still rising at {leak_plateau_ratio} of "
     "that slope (memory that plateaus, or returns to a floor, is no leak).",
     "Memory the job holds grows epoch after epoch: something keeps references (lists of "
     "results, logged tensors, caches without a bound). Find what grows with `tracemalloc` "
     "(snapshots a few epochs apart) and bound or drop it.",
     "Log numbers, not tensors (`float(loss)`), clear per-epoch lists, and call "
     "`keras.backend.clear_session()` when models are built in a loop.",
     "Log `loss.item()`, not the loss tensor (it keeps the graph); `del` held outputs; when "
     "DataLoader workers grow together (copy-on-read: Python objects touched by every worker "
     "turn shared pages private), keep the dataset's items in numpy arrays or tensors instead "
     "of Python lists and dicts.",
     "Return detached numbers from `training_step` logs (`self.log(..., loss.detach())`); "
     "do not collect outputs in lists across an epoch; for worker copy-on-read keep the "
     "dataset's items in numpy arrays instead of Python lists.",
     "Log `float(loss)` rather than the tensor; keep a `paddle.io.Dataset`'s items in numpy "
     "arrays, not Python lists, so loader workers do not copy them."},
    {F::kGpuMemoryLeak, "gpu-memory-leak",
     "After {leak_warmup_s} (or the first epoch), the floors of the job's memory on a GPU "
     "(`gpus[].job_memory_bytes`, or the framework allocator's allocated bytes) rise, judged "
     "as for host-memory-leak.",
     "Device memory the job holds grows: tensors are kept from step to step. It ends in "
     "\"out of memory\" when it reaches the GPU's size.",
     "Do not keep model outputs across steps; `tf.config.experimental.get_memory_info('GPU:0')` "
     "each epoch shows the growth; rebuild `tf.function`s only once.",
     "`torch.cuda.memory_summary()` (written to the run directory when this opens) shows "
     "what holds memory; `del` tensors kept across steps, log `loss.item()`, and run "
     "evaluation under `torch.no_grad()`.",
     "Log detached values (`self.log(name, value.detach())`), do not accumulate outputs in "
     "`*_step` methods, and check `torch.cuda.memory_summary()` (written to the run "
     "directory).",
     "Log `float(loss)`, run evaluation under `paddle.no_grad()`, and check "
     "`paddle.device.cuda.memory_allocated()` per epoch."},
    {F::kAllocatorGrowth, "allocator-growth",
     "The framework allocator's reserved bytes on a GPU rise (judged as for gpu-memory-leak) "
     "while its allocated bytes grow less than {allocator_growth_share} as fast.",
     "The allocator keeps more memory than the tensors need: fragmentation from changing "
     "shapes, or a cache that grows. It can fail with memory reserved but free.",
     "",
     "Set `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` (less fragmentation), keep "
     "batch shapes fixed (pad variable lengths to a few buckets), and "
     "`torch.cuda.empty_cache()` only between phases.",
     "", ""},
    {F::kOomForecast, "oom-forecast",
     "A leak's slope reaches the memory's limit (the GPU's memory; the tightest cgroup limit "
     "or what the host has available) before the planned last epoch, or without a planned "
     "length within {oom_horizon_s}; it closes when the trend flattens.",
     "At this rate the job runs out of memory before it finishes: fix the leak, or checkpoint "
     "now and restart with more headroom (smaller batches). The callbacks act on it with "
     "`on_oom_risk=` (warn, checkpoint, stop, or your function).",
     "", "", "", ""},
    {F::kOom, "oom",
     "The job ran out of memory: the kernel's OOM killer ended a process of it (cgroup "
     "`oom_kill`, or SIGKILL with the job at {host_memory_critical_ratio} of its memory "
     "limit), or the framework raised its out-of-memory error.",
     "The run died of memory: see the last minutes of memory figures in the evidence and any "
     "leak finding; lower the batch size, fix the leak, or ask for more memory.",
     "", "", "", ""},
};
static_assert(std::size(kFindings) == kFindingCount);

constexpr ThresholdDef kThresholds[] = {
    {Th::kWarmup_s, "warmup_s", 30, "seconds",
     "own: after the first step (or the start, without markers), compilation and cache "
     "filling are not judged"},
    {Th::kJudgeMinSteps, "judge_min_steps", 20, "count",
     "own: with step markers, input-bound and stalled judge from this many steps after the "
     "first, not a full window (TensorFlow's input-pipeline analyzer judges a profile of 20 "
     "steps or fewer)"},
    {Th::kJudgeMin_s, "judge_min_s", 20, "seconds",
     "own: ... and this much training time after the first step, so a few slow first batches "
     "do not decide"},
    {Th::kWindow_s, "window_s", 60, "seconds", "own: the sliding window rules average over"},
    {Th::kOpen_s, "open_s", 30, "seconds",
     "own: a condition must hold this long before its finding opens"},
    {Th::kHold_s, "hold_s", 60, "seconds",
     "own: a finding closes only after its condition has been clear this long"},
    {Th::kRepeatLine_s, "repeat_line_s", 300, "seconds",
     "own: at most one stderr line per finding id in this time (W&B alerts: one per title per "
     "minute)"},
    {Th::kInputBoundRatio, "input_bound_ratio", 0.10, "ratio",
     "TensorFlow Profiler rule engine: input > 10 % of step time"},
    {Th::kInputBoundHighRatio, "input_bound_high_ratio", 0.20, "ratio",
     "TensorFlow Profiler input-pipeline analyzer: >= 20 % is HIGHLY input-bound"},
    {Th::kCpuBoundGpuRatio, "cpu_bound_gpu_ratio", 0.10, "ratio",
     "SageMaker Debugger CPUBottleneck: GPU < 10 %"},
    {Th::kCpuBoundCpuRatio, "cpu_bound_cpu_ratio", 0.90, "ratio",
     "SageMaker Debugger CPUBottleneck: CPU > 90 %"},
    {Th::kCpuBoundShare, "cpu_bound_share", 0.50, "ratio",
     "SageMaker Debugger CPUBottleneck/IOBottleneck: in > 50 % of the samples"},
    {Th::kIoBoundGpuRatio, "io_bound_gpu_ratio", 0.10, "ratio",
     "SageMaker Debugger IOBottleneck: GPU < 10 %"},
    {Th::kIoBoundIowaitRatio, "io_bound_iowait_ratio", 0.50, "ratio",
     "SageMaker Debugger IOBottleneck: iowait > 50 %"},
    {Th::kGpuIdleRatio, "gpu_idle_ratio", 0.01, "ratio",
     "Princeton jobstats: a GPU is unused when its mean is 0 (1 % allows for driver noise)"},
    {Th::kGpuIdle_s, "gpu_idle_s", 300, "seconds",
     "own, shorter than Job Defense Shield's 60 min: a training GPU idle 5 min is lost time"},
    {Th::kGpuUnused_s, "gpu_unused_s", 300, "seconds", "Princeton jobstats: minimum runtime 300 s"},
    {Th::kLowGpuUtilRatio, "low_gpu_util_ratio", 0.25, "ratio",
     "Princeton jobstats: 'somewhat low' <= 25 %; Job Defense Shield threshold 25 %"},
    {Th::kLowGpuUtilRedRatio, "low_gpu_util_red_ratio", 0.15, "ratio",
     "Princeton jobstats: red <= 15 %"},
    {Th::kLowGpuUtilWindow_s, "low_gpu_util_window_s", 300, "seconds",
     "jobstats minimum runtime 300 s; SageMaker LowGPUUtilization judges 500 points"},
    {Th::kImbalanceScore, "imbalance_score", 0.75, "ratio",
     "nvidia-resiliency-ext straggler score < 0.75"},
    {Th::kImbalanceGap, "imbalance_gap", 0.20, "ratio",
     "own: at least 20 points apart, so two near-idle GPUs are not 'imbalanced'"},
    {Th::kStragglerScore, "straggler_score", 0.75, "ratio",
     "nvidia-resiliency-ext: per-rank score best/this < 0.75"},
    {Th::kStragglerWaitGap, "straggler_wait_gap", 0.20, "ratio",
     "own, on TensorFlow's 20 % input-bound band: one rank waits that much more than the rest"},
    {Th::kThroughputDropRatio, "throughput_drop_ratio", 0.75, "ratio",
     "nvidia-resiliency-ext: a rank below 0.75 of the best median step time, held here "
     "against the run's own best window"},
    {Th::kThrottleShare, "throttle_share", 0.20, "ratio",
     "own: throttled a fifth of the time is a measurable slowdown"},
    {Th::kHostMemoryRatio, "host_memory_ratio", 0.90, "ratio",
     "the usual static memory alert: > 90 % (held 15 min elsewhere; here open_s)"},
    {Th::kHostMemoryCriticalRatio, "host_memory_critical_ratio", 0.95, "ratio",
     "own: 5 % from the OOM killer"},
    {Th::kSwapBytesPerSecond, "swap_bytes_per_second", 16.0 * 1024 * 1024, "bytes/s",
     "own: 16 MiB/s of new swap is steady paging, not a stray page"},
    {Th::kGpuMemoryFullRatio, "gpu_memory_full_ratio", 0.95, "ratio",
     "PyTorch profiler plugin: peak > 90 % of device memory (95 % here: allocators cache)"},
    {Th::kBatchSmallRatio, "batch_small_ratio", 0.70, "ratio",
     "SageMaker Debugger BatchSize: CPU, GPU and GPU memory all < 70 %"},
    {Th::kEvalShare, "eval_share", 0.30, "ratio",
     "own: evaluation is usually a tenth of an epoch or less"},
    {Th::kEvalShareHigh, "eval_share_high", 0.50, "ratio", "own: more evaluating than training"},
    {Th::kStalled_s, "stalled_s", 60, "seconds", "the issue's rule: 60 s without a step"},
    {Th::kStalledFactor, "stalled_factor", 20, "count", "the issue's rule: 20 median step times"},
    {Th::kSlowStart_s, "slow_start_s", 600, "seconds",
     "own, half SageMaker's MaxInitializationTime (20 min)"},
    {Th::kSharedMemoryShare, "shared_memory_share", 0.10, "ratio",
     "own: others holding a tenth of the GPU's memory"},
    {Th::kBusyRatio, "busy_ratio", 0.05, "ratio",
     "own: a GPU above this is doing work (for gpu-imbalance and throttled)"},
    {Th::kLeakWarmup_s, "leak_warmup_s", 30, "seconds",
     "own: without epochs, memory taken at start-up (model, caches) is not a trend"},
    {Th::kLeakWindow_s, "leak_window_s", 5, "seconds",
     "own: without epochs, one floor (minimum) per window, so a leak shows within a minute"},
    {Th::kLeakMinFloors, "leak_min_floors", 6, "count",
     "Mann-Kendall (normal approximation): 6 rising points give p = 0.004, the fewest that pass 1 "
     "%"},
    {Th::kLeakFloors, "leak_floors", 24, "count",
     "own: the newest floors judged, so a leak that stopped is let go"},
    {Th::kLeakPValue, "leak_p_value", 0.01, "ratio",
     "own: a 1 % chance that floors with no trend look this ordered"},
    {Th::kLeakMinGrowth, "leak_min_growth", 32.0 * 1024 * 1024, "bytes",
     "own: growth below 32 MiB over the judged floors is noise of the allocators"},
    {Th::kLeakPlateauRatio, "leak_plateau_ratio", 0.5, "ratio",
     "own: memory that grew and then levelled off (a cache that filled) is no leak"},
    {Th::kAllocatorGrowthShare, "allocator_growth_share", 0.25, "ratio",
     "own: reserved grows at least 4x as fast as allocated"},
    {Th::kOomHorizon_s, "oom_horizon_s", 6 * 3600, "seconds",
     "own: without a planned length, a job that runs out within 6 hours (the users' story)"},
    {Th::kProfileSteps, "profile_steps", 20, "count",
     "own: the steps profiled when a finding of `profile_on` opens (0: none); enough for a "
     "steady picture, short enough to cost little"},
    {Th::kProfileBudget, "profile_budget", 0.01, "ratio",
     "own: the share of the run's time its profiles may take, the estimate of the next "
     "included"},
};
static_assert(std::size(kThresholds) == kThresholdCount);

constexpr bool TablesInOrder() {
  for (size_t i = 0; i < kFindingCount; ++i) {
    if (static_cast<size_t>(kFindings[i].id) != i) return false;
  }
  for (size_t i = 0; i < kThresholdCount; ++i) {
    if (static_cast<size_t>(kThresholds[i].id) != i) return false;
  }
  return true;
}
static_assert(TablesInOrder(), "tables must list entries in enum order");

std::string ValueText(const ThresholdDef& t, double v) {
  if (t.unit == std::string_view("ratio")) return fmt::format("{:g} %", v * 100);
  if (t.unit == std::string_view("seconds")) return fmt::format("{:g} s", v);
  if (t.unit == std::string_view("bytes/s")) return fmt::format("{:g} MiB/s", v / (1 << 20));
  if (t.unit == std::string_view("bytes")) return fmt::format("{:g} MiB", v / (1 << 20));
  return fmt::format("{:g}", v);
}

// The rule with each {key} replaced by the threshold's default value.
std::string RuleText(std::string_view rule) {
  std::string out;
  size_t at = 0;
  while (at < rule.size()) {
    size_t open = rule.find('{', at);
    size_t close = open == std::string_view::npos ? open : rule.find('}', open);
    if (close == std::string_view::npos) break;
    out.append(rule.substr(at, open - at));
    std::string_view key = rule.substr(open + 1, close - open - 1);
    const ThresholdDef* t = FindThreshold(key);
    out += t != nullptr ? fmt::format("{} (`{}`)", ValueText(*t, t->value), key)
                        : std::string(rule.substr(open, close - open + 1));
    at = close + 1;
  }
  out.append(rule.substr(at));
  return out;
}

}  // namespace

Framework ParseFramework(std::string_view name) {
  if (name == "keras" || name == "tensorflow") return Framework::kKeras;
  if (name == "torch" || name == "pytorch") return Framework::kTorch;
  if (name == "lightning") return Framework::kLightning;
  if (name == "paddle") return Framework::kPaddle;
  return Framework::kNone;
}

const FindingDef& Def(FindingId id) { return kFindings[static_cast<size_t>(id)]; }
std::span<const FindingDef> FindingDefs() { return kFindings; }

std::string_view AdviceFor(const FindingDef& def, Framework framework) {
  std::string_view own;
  switch (framework) {
    case Framework::kKeras:
      own = def.advice_keras;
      break;
    case Framework::kTorch:
      own = def.advice_torch;
      break;
    case Framework::kLightning:
      own = def.advice_lightning.empty() ? def.advice_torch : def.advice_lightning;
      break;
    case Framework::kPaddle:
      own = def.advice_paddle;
      break;
    case Framework::kNone:
      break;
  }
  return own.empty() ? def.advice : own;
}

std::string StalledAdvice(Framework framework, int pid, bool ranks) {
  std::string stacks =
      pid > 0 ? fmt::format("`py-spy dump --pid {}`", pid) : std::string("`py-spy dump --pid PID`");
  if (!ranks) {
    return fmt::format(
        "See where it waits: {} prints its Python stacks (`pip install py-spy`; add "
        "`--native` for C++ frames). A DataLoader worker that hangs shows as the main "
        "process waiting in `_get_data`; a file system that hangs, in a read.",
        stacks);
  }
  if (framework == Framework::kTorch || framework == Framework::kLightning) {
    return fmt::format(
        "A collective waits for a rank that stopped: {} on each rank shows which. Set "
        "`TORCH_NCCL_ASYNC_ERROR_HANDLING=1` (`NCCL_ASYNC_ERROR_HANDLING` before PyTorch 2.2) "
        "and a `timeout=` in `init_process_group`, so a lost rank fails instead of hanging; "
        "`DataLoader(timeout=...)` for stuck workers.",
        stacks);
  }
  return fmt::format(
      "A collective waits for a rank that stopped: {} on each rank shows which; set the "
      "collective timeout of your launcher so a lost rank fails instead of hanging.",
      stacks);
}

std::span<const ThresholdDef> ThresholdDefs() { return kThresholds; }

const ThresholdDef* FindThreshold(std::string_view key) {
  for (const ThresholdDef& t : kThresholds) {
    if (t.key == key) return &t;
  }
  return nullptr;
}

Thresholds::Thresholds() {
  for (size_t i = 0; i < kThresholdCount; ++i) values_[i] = kThresholds[i].value;
  for (FindingId id :
       {F::kInputBound, F::kLowGpuUtil, F::kCpuBound, F::kStraggler, F::kThroughputDrop}) {
    profiled_[static_cast<size_t>(id)] = true;
  }
}

std::string Thresholds::SetList(std::string_view key, const std::vector<std::string>& names) {
  if (key != kProfileOn) {
    return FindThreshold(key) != nullptr
               ? fmt::format("'{}' must be a number, not a list", key)
               : fmt::format("unknown list '{}' (the one list is '{}')", key, kProfileOn);
  }
  std::array<bool, kFindingCount> on{};
  for (const std::string& name : names) {
    const FindingDef* def = nullptr;
    for (const FindingDef& f : kFindings) {
      if (f.name == name) def = &f;
    }
    if (def == nullptr) {
      std::vector<std::string_view> ids;
      for (const FindingDef& f : kFindings) ids.push_back(f.name);
      std::string_view near = NearestWord(name, ids);
      return fmt::format("'{}': unknown finding '{}'{} (docs/findings.md lists them)", key, name,
                         near.empty() ? "" : fmt::format(", did you mean '{}'?", near));
    }
    on[static_cast<size_t>(def->id)] = true;
  }
  profiled_ = on;
  return {};
}

std::string Thresholds::Set(std::string_view key, double value) {
  const ThresholdDef* t = FindThreshold(key);
  if (key == kProfileOn) return fmt::format("'{}' must be a list of finding ids", key);
  if (t == nullptr) {
    std::vector<std::string_view> keys;
    for (const ThresholdDef& d : kThresholds) keys.push_back(d.key);
    std::string_view near = NearestWord(key, keys);
    return fmt::format("unknown threshold '{}'{} (docs/findings.md lists them)", key,
                       near.empty() ? "" : fmt::format(", did you mean '{}'?", near));
  }
  if (!std::isfinite(value) || value < 0) {
    return fmt::format("'{}' must be a number >= 0, not {}", key, value);
  }
  values_[static_cast<size_t>(t->id)] = value;
  return {};
}

Thresholds ThresholdsFrom(const std::vector<ThresholdSetting>& settings) {
  Thresholds th;
  for (const ThresholdSetting& s : settings) {
    std::string error = s.is_list ? th.SetList(s.key, s.names) : th.Set(s.key, s.value);
    if (!error.empty()) throw ConfigError(fmt::format("{}: findings: {}", s.where, error));
  }
  return th;
}

std::string FindingsMarkdown() {
  std::string out = "## Findings\n\n";
  for (const FindingDef& f : kFindings) {
    out += fmt::format("### `{}`\n\n{}\n\n", f.name, RuleText(f.rule));
    out += fmt::format("- Advice: {}\n", f.advice);
    const std::pair<std::string_view, std::string_view> own[] = {
        {"Keras / TensorFlow", f.advice_keras},
        {"PyTorch", f.advice_torch},
        {"Lightning", f.advice_lightning},
        {"Paddle", f.advice_paddle}};
    for (const auto& [who, text] : own) {
      if (!text.empty()) out += fmt::format("- {}: {}\n", who, text);
    }
    out += "\n";
  }
  out +=
      "## Thresholds\n\nSet any of them in the config file's `[findings]` table "
      "(`[findings]` then `window_s = 30`).\n\n"
      "| key | default | source |\n|---|---|---|\n";
  for (const ThresholdDef& t : kThresholds) {
    out += fmt::format("| `{}` | {} | {} |\n", t.key, ValueText(t, t.value), t.source);
  }
  out += fmt::format(
      "\nOne entry is a list: `{}`, the findings whose opening asks the training processes "
      "for a profile of their next `profile_steps` steps (docs/markers.md \"Profiles\"), by "
      "default `[\"input-bound\", \"low-gpu-util\", \"cpu-bound\", \"straggler\", "
      "\"throughput-drop\"]`; `[]` "
      "takes none.\n",
      kProfileOn);
  return out;
}

}  // namespace tv
