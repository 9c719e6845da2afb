// The back-channel of the marker protocol (docs/markers.md, "Memory risks"):
// the sampler writes the latest memory risk into the steps file's header and
// its number into every claimed step slot; a training process notices the
// number change in Step() and reads the record. Pure functions over the
// shared-memory record; no syscall.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/training_sample.h"
#include "markers/protocol.h"

namespace tv {

// The finding a risk comes from: "oom-forecast", "gpu-memory-leak", "host-memory-leak";
// "alert-stop" for an alert's request to stop.
std::string_view RiskKindId(MemoryRisk::Kind kind);

// Writes `risk` as the record numbered `seq` (>= 1). The sampler is the one
// writer; readers in other processes see the old record or the new one whole.
void WriteRisk(const MemoryRisk& risk, uint32_t seq, RiskRecord* record);

// The record and its number (into `*seq`); std::nullopt when there is none
// yet, or when the writer kept changing it (retried a few times).
std::optional<MemoryRisk> ReadRisk(const RiskRecord& record, uint32_t* seq);

// One line in words, e.g. "GPU 0 memory grows 82 MB/epoch: it runs out at
// epoch 23 of 50, in about 3 h 10 min". `seconds_per_epoch`: how long the
// reader's epochs take, for the growth per epoch; without it, per minute.
std::string DescribeRisk(const MemoryRisk& risk, std::optional<double> seconds_per_epoch);

}  // namespace tv
