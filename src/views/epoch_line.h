// The one line said per epoch on stderr (duration, steps/s, loss, CPU, RAM and per
// GPU load with the job's SM share, memory with the job's and the others', allocator
// peak, temperature, energy), from the
// epoch record PhaseTracker writes; and the phases line of the summary.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "store/epoch_record.h"

namespace tv {

std::string FormatEpochLine(const EpochRecord& epoch);
// An `epoch` event's fields; a record of the wrong shape is said as such.
std::string FormatEpochLine(const nlohmann::ordered_json& epoch);
// "train 41 s (80%, GPU0 87%), eval 10 s (20%, GPU0 12%)"; empty without phases.
std::string FormatPhases(const PhaseRecords& phases);

}  // namespace tv
