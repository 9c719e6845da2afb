// What a profile taken when a finding opened says of it (the `profile`
// event, docs/markers.md "Profiles"): the finding's evidence, a sentence for
// its message, and whether the trace contradicts it (an input-bound finding
// whose trace shows little time in the data loader).
#pragma once

#include <string>

#include "analysis/findings/table.h"
#include "core/training_sample.h"
#include "store/finding_record.h"

namespace tv {

// profile (the directory), trace_data_loader_share, trace_h2d_share,
// trace_gpu_idle_share, trace_top_ops; confidence "low" when it contradicts.
Evidence ProfileEvidence(FindingId id, const ProfileCapture& p);
// " A profile of 20 steps (profiles/input-bound-0-812) shows 41% of step time
// in the data loader, ...; top operators: aten::mm 22%, ..."
std::string ProfileSentence(FindingId id, const ProfileCapture& p);

}  // namespace tv
