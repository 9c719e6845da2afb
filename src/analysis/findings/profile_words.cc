#include "analysis/findings/profile_words.h"

#include <fmt/format.h>

#include <cmath>

#include "analysis/findings/format.h"

namespace tv {
namespace {

// Below this share of step time in the data loader, a trace does not bear
// out an input-bound finding.
constexpr double kLoaderConfirms = 0.1;
// Operators under this share of step time are left out of the sentence.
constexpr double kOpWorthSaying = 0.01;

bool Contradicts(FindingId id, const ProfileCapture& p) {
  return id == FindingId::kInputBound && p.figures.data_loader_share &&
         *p.figures.data_loader_share < kLoaderConfirms;
}

std::string Percent(double share) { return fmt::format("{:.0f}%", share * 100); }

}  // namespace

Evidence ProfileEvidence(FindingId id, const ProfileCapture& p) {
  Evidence e;
  e["profile"] = p.dir;
  const TraceFigures& f = p.figures;
  if (f.data_loader_share) e["trace_data_loader_share"] = Round4(*f.data_loader_share);
  if (f.h2d_share) e["trace_h2d_share"] = Round4(*f.h2d_share);
  if (f.gpu_idle_share) e["trace_gpu_idle_share"] = Round4(*f.gpu_idle_share);
  for (const auto& [key, top] :
       {std::pair{"trace_top_ops", &f.top_ops}, {"trace_top_kernels", &f.top_kernels}}) {
    if (top->empty()) continue;
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto& [name, share] : *top) list.push_back({name, Round4(share)});
    e[key] = EvidenceValue(list);
  }
  if (Contradicts(id, p)) e["confidence"] = "low";
  return e;
}

std::string ProfileSentence(FindingId id, const ProfileCapture& p) {
  const TraceFigures& f = p.figures;
  if (!p.trace_error.empty()) {
    return fmt::format(" A profile of {} steps is in {} (its trace could not be read: {}).",
                       p.steps, p.dir, p.trace_error);
  }
  std::string parts;
  auto add = [&parts](std::string part) { parts += (parts.empty() ? "" : ", ") + std::move(part); };
  if (f.data_loader_share) add(Percent(*f.data_loader_share) + " of step time in the data loader");
  if (f.h2d_share) add(Percent(*f.h2d_share) + " in host-to-device copies");
  if (f.gpu_idle_share) add("the GPU idle " + Percent(*f.gpu_idle_share) + " of it");
  // Those worth a word; all are in the evidence.
  auto worth = [](const std::vector<std::pair<std::string, double>>& top) {
    std::string out;
    for (const auto& [name, share] : top) {
      if (share >= kOpWorthSaying) {
        out += fmt::format("{}{} {}", out.empty() ? "" : ", ", name, Percent(share));
      }
    }
    return out;
  };
  std::string ops = worth(f.top_ops);
  std::string kernels = worth(f.top_kernels);
  std::string sentence = fmt::format(" A profile of {} steps ({}) shows {}{}{}.", f.steps, p.dir,
                                     parts.empty() ? "its operators" : parts,
                                     ops.empty() ? "" : "; top operators: " + ops,
                                     kernels.empty() ? "" : "; top GPU kernels: " + kernels);
  if (Contradicts(id, p)) {
    sentence += " That does not bear out this finding: the wait is elsewhere (confidence low).";
  }
  return sentence;
}

}  // namespace tv
