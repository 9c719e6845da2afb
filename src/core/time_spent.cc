#include "core/time_spent.h"

#include <iterator>

namespace tv {
namespace {

struct SpentDef {
  std::string_view name;
  std::string_view words;
  bool lost;
};

constexpr SpentDef kSpent[] = {
    {"productive", "productive steps", false},
    {"startup", "start-up before the first step", false},
    {"data_wait", "waiting for input", true},
    {"evaluation", "evaluation", false},
    {"checkpoint", "checkpoints", false},
    {"other_phases", "other phases and teardown", false},
    {"stalled", "stalled", true},
    {"idle_gpu", "GPUs held idle", true},
    {"unattributed", "not split (no step markers)", false},
};
static_assert(std::size(kSpent) == kSpentCount);

const SpentDef& DefOf(Spent s) { return kSpent[static_cast<size_t>(s)]; }

}  // namespace

std::string_view SpentName(Spent s) { return DefOf(s).name; }
std::string_view SpentWords(Spent s) { return DefOf(s).words; }
bool SpentLost(Spent s) { return DefOf(s).lost; }

Spent SpentInPhase(std::string_view phase) {
  for (std::string_view eval : {"eval", "val", "valid", "validate", "validation", "test", "testing",
                                "predict", "prediction", "inference"}) {
    if (phase == eval) return Spent::kEvaluation;
  }
  for (std::string_view save : {"checkpoint", "ckpt", "save", "saving"}) {
    if (phase == save) return Spent::kCheckpoint;
  }
  return Spent::kOtherPhases;
}

std::optional<Spent> SpentFromName(std::string_view name) {
  for (size_t i = 0; i < kSpentCount; ++i) {
    if (kSpent[i].name == name) return static_cast<Spent>(i);
  }
  return std::nullopt;
}

}  // namespace tv
