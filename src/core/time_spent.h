// The categories a run's wall time goes to (a goodput breakdown: productive
// training steps against the rest), with their JSON names and words. The
// analysis books each row's time (analysis/findings/goodput.h); sinks and
// views name them from here.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace tv {

enum class Spent {
  kProductive,    // training steps computing
  kStartup,       // before the first step: imports, data indexing, compilation
  kDataWait,      // training steps waiting for their next batch
  kEvaluation,    // phases eval, validation, test, predict
  kCheckpoint,    // phases checkpoint, save
  kOtherPhases,   // any other named phase, and the tail after the training processes left
  kStalled,       // no step while a stall was established (the stalled rule)
  kIdleGpu,       // the job held GPU memory and no GPU it held computed
  kUnattributed,  // no step markers: time not split (only held idle GPUs are known)
};
inline constexpr size_t kSpentCount = 9;

std::string_view SpentName(Spent s);   // "productive", "data_wait", ...: JSON keys
std::string_view SpentWords(Spent s);  // "waiting for input", ...: the summary's words
// Whether time spent so is lost (the score takes a point per percent of it).
bool SpentLost(Spent s);
// The category a named phase's time goes to: eval/val/validation/test/predict,
// checkpoint/save, or another phase.
Spent SpentInPhase(std::string_view phase);
// The category of a JSON name; nullopt for another name.
std::optional<Spent> SpentFromName(std::string_view name);

}  // namespace tv
