// Pure encoders for TensorBoard event files: TFRecord framing and the few
// protobuf fields of Event/Summary/Value that scalars need (tensorflow's
// event.proto and summary.proto), written in field-number order with defaults
// omitted. No I/O; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tv {

struct TbScalar {
  std::string tag;
  float value = 0;
};

// Appends one framed record: uint64 LE length, masked CRC-32C of those 8
// bytes, the data, masked CRC-32C of the data.
void AppendTfRecord(std::string_view data, std::string* out);

// Event{wall_time=1, file_version=3 "brain.Event:2"}: the first record of a file.
std::string EncodeFileVersionEvent(double wall_time);
// Event{wall_time=1, step=2, summary=5{value=1[{tag=1, simple_value=2}...]}}.
std::string EncodeScalarEvent(double wall_time, int64_t step, const std::vector<TbScalar>& scalars);

// One framed record read back from `in` at `*pos`, both CRCs checked; on
// success advances `*pos`. nullopt for a short (cut) or corrupt record.
std::optional<std::string_view> ReadTfRecord(std::string_view in, size_t* pos);

}  // namespace tv
