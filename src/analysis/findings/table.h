// The findings table: every condition trainvitals judges a run by (its id,
// default severity, rule and advice per framework) and every threshold the
// rules use (with the tool or study it came from), defined once. The rules
// (rules.h lists them, one file each), the config file's [findings] table and
// docs/findings.md are all read from here.
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/severity.h"

namespace tv {

// The framework the training process said it runs (client_start); kNone
// without markers: advice is then generic.
enum class Framework { kNone, kKeras, kTorch, kLightning, kPaddle };
Framework ParseFramework(std::string_view name);  // "keras", "torch", ...; else kNone

enum class FindingId {
  kInputBound,
  kCpuBound,
  kIoBound,
  kGpuIdle,
  kGpuUnused,
  kLowGpuUtil,
  kGpuImbalance,
  kStraggler,
  kThroughputDrop,
  kThrottled,
  kHostMemoryPressure,
  kSwapping,
  kGpuMemoryNearFull,
  kBatchTooSmall,
  kEvalHeavy,
  kStalled,
  kSlowStart,
  kSharedGpu,
  kHostMemoryLeak,
  kGpuMemoryLeak,
  kAllocatorGrowth,
  kOomForecast,
  kOom,
};
inline constexpr size_t kFindingCount = 23;

struct FindingDef {
  FindingId id;
  std::string_view name;  // the stable id: "input-bound"
  std::string_view rule;  // when it opens, in words, naming its thresholds
  // Advice, generic and per framework; an empty entry falls back to generic.
  std::string_view advice;
  std::string_view advice_keras;
  std::string_view advice_torch;
  std::string_view advice_lightning;
  std::string_view advice_paddle;
};
const FindingDef& Def(FindingId id);
std::span<const FindingDef> FindingDefs();
// The advice for `framework`: its own, else the generic one.
std::string_view AdviceFor(const FindingDef& def, Framework framework);

// stalled's advice fits the job: one training process gets the command that
// takes its stacks (with its pid); several ranks the collective settings.
std::string StalledAdvice(Framework framework, int pid, bool ranks);

// Every threshold, by name. Values are SI units (seconds, ratios 0..1, bytes).
enum class Th {
  kWarmup_s,
  kJudgeMinSteps,
  kJudgeMin_s,
  kWindow_s,
  kOpen_s,
  kHold_s,
  kRepeatLine_s,
  kInputBoundRatio,
  kInputBoundHighRatio,
  kCpuBoundGpuRatio,
  kCpuBoundCpuRatio,
  kCpuBoundShare,
  kIoBoundGpuRatio,
  kIoBoundIowaitRatio,
  kGpuIdleRatio,
  kGpuIdle_s,
  kGpuUnused_s,
  kLowGpuUtilRatio,
  kLowGpuUtilRedRatio,
  kLowGpuUtilWindow_s,
  kImbalanceScore,
  kImbalanceGap,
  kStragglerScore,
  kStragglerWaitGap,
  kThroughputDropRatio,
  kThrottleShare,
  kHostMemoryRatio,
  kHostMemoryCriticalRatio,
  kSwapBytesPerSecond,
  kGpuMemoryFullRatio,
  kBatchSmallRatio,
  kEvalShare,
  kEvalShareHigh,
  kStalled_s,
  kStalledFactor,
  kSlowStart_s,
  kSharedMemoryShare,
  kBusyRatio,
  kLeakWarmup_s,
  kLeakWindow_s,
  kLeakMinFloors,
  kLeakFloors,
  kLeakPValue,
  kLeakMinGrowth,
  kLeakPlateauRatio,
  kAllocatorGrowthShare,
  kOomHorizon_s,
  kProfileSteps,
  kProfileBudget,
};
inline constexpr size_t kThresholdCount = 49;

struct ThresholdDef {
  Th id;
  std::string_view key;  // the [findings] key in the config file
  double value;
  std::string_view unit;    // "seconds", "ratio", "bytes/s", "count"
  std::string_view source;  // where the number comes from
};
std::span<const ThresholdDef> ThresholdDefs();
const ThresholdDef* FindThreshold(std::string_view key);

// The thresholds one analysis uses: the table's values, some overridden.
class Thresholds {
 public:
  Thresholds();
  double operator[](Th id) const { return values_[static_cast<size_t>(id)]; }
  // Overrides the threshold `key` (a config [findings] key). Returns what is
  // wrong (unknown key, with the near one; a negative value), empty when set.
  std::string Set(std::string_view key, double value);
  // Whether a profile of the next steps is taken when `id` opens
  // (docs/markers.md "Profiles"): `profile_on`, by default input-bound,
  // low-gpu-util, cpu-bound, straggler and throughput-drop.
  bool ProfiledOnOpening(FindingId id) const { return profiled_[static_cast<size_t>(id)]; }
  // Sets the list `key` (profile_on: finding ids); returns what is wrong (an
  // unknown key or finding, with the near one), empty when set.
  std::string SetList(std::string_view key, const std::vector<std::string>& names);

 private:
  std::array<double, kThresholdCount> values_{};
  std::array<bool, kFindingCount> profiled_{};
};

// The table's thresholds with the config file's [findings] entries over them.
// Throws ConfigError naming the file, line and key of a wrong entry.
Thresholds ThresholdsFrom(const std::vector<ThresholdSetting>& settings);

// docs/findings.md's generated part: the findings and the thresholds.
std::string FindingsMarkdown();

}  // namespace tv
