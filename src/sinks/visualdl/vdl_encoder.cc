#include "sinks/visualdl/vdl_encoder.h"

#include <cstring>

#include "sinks/proto_wire.h"

namespace tv {
namespace {

using wire::AppendBytesField;
using wire::AppendLe;
using wire::AppendVarint;

// Value{id, tag, timestamp} followed by `rest`, wrapped as Record.values[0].
std::string Record(int64_t step, std::string_view tag, int64_t timestamp_ms,
                   std::string_view rest) {
  std::string value;
  if (step != 0) {
    value.push_back(0x08);
    AppendVarint(static_cast<uint64_t>(step), &value);
  }
  AppendBytesField(2, tag, &value);
  if (timestamp_ms != 0) {
    value.push_back(0x18);
    AppendVarint(static_cast<uint64_t>(timestamp_ms), &value);
  }
  value.append(rest);
  std::string record;
  AppendBytesField(1, value, &record);
  return record;
}

}  // namespace

void AppendVdlRecord(std::string_view data, std::string* out) {
  AppendLe(data.size(), 8, out);
  out->append(data);
}

std::string EncodeVdlMetaData(int64_t timestamp_ms) {
  std::string meta;
  AppendBytesField(10, "", &meta);  // meta_data: MetaData{} (display_name unset)
  return Record(0, "meta_data_tag", timestamp_ms, meta);
}

std::string EncodeVdlScalar(std::string_view tag, int64_t step, int64_t timestamp_ms, float value) {
  std::string field;
  field.push_back(0x25);  // value = 4, fixed32
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  AppendLe(bits, 4, &field);
  return Record(step, tag, timestamp_ms, field);
}

}  // namespace tv
