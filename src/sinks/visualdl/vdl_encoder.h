// Pure encoders for VisualDL log files (vdlrecords.*.log): framing is a uint64
// LE length and the data, no CRC; the data is visualdl.Record{repeated Value
// values = 1} with Value{int64 id = 1 (step); string tag = 2; int64 timestamp
// = 3 (ms); float value = 4; MetaData meta_data = 10}. VisualDL's reader looks
// only at values[0], so each scalar is a Record of its own. No I/O; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tv {

// Appends `data` framed as one VisualDL record.
void AppendVdlRecord(std::string_view data, std::string* out);
// The first record of a file: Value{tag "meta_data_tag", meta_data {}}.
std::string EncodeVdlMetaData(int64_t timestamp_ms);
// One scalar: Value{id = step, tag, timestamp, value}.
std::string EncodeVdlScalar(std::string_view tag, int64_t step, int64_t timestamp_ms, float value);

}  // namespace tv
