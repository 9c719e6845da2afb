#include "sinks/tfevents/event_encoder.h"

#include <cstring>

#include "sinks/proto_wire.h"
#include "sinks/tfevents/crc32c.h"

namespace tv {
namespace {

using wire::AppendBytesField;
using wire::AppendLe;
using wire::AppendVarint;

uint64_t ReadLe(std::string_view in, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t(static_cast<unsigned char>(in[i])) << (8 * i);
  return v;
}

void AppendDouble(double v, std::string* out) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  AppendLe(bits, 8, out);
}

std::string EventHeader(double wall_time, int64_t step) {
  std::string event;
  event.push_back(0x09);  // wall_time, fixed64
  AppendDouble(wall_time, &event);
  if (step != 0) {
    event.push_back(0x10);  // step, varint (int64: negatives as 10 bytes)
    AppendVarint(static_cast<uint64_t>(step), &event);
  }
  return event;
}

}  // namespace

void AppendTfRecord(std::string_view data, std::string* out) {
  std::string len;
  AppendLe(data.size(), 8, &len);
  out->append(len);
  AppendLe(MaskedCrc32c(len), 4, out);
  out->append(data);
  AppendLe(MaskedCrc32c(data), 4, out);
}

std::string EncodeFileVersionEvent(double wall_time) {
  std::string event = EventHeader(wall_time, 0);
  AppendBytesField(3, "brain.Event:2", &event);
  return event;
}

std::string EncodeScalarEvent(double wall_time, int64_t step,
                              const std::vector<TbScalar>& scalars) {
  std::string summary;
  std::string value;
  for (const TbScalar& s : scalars) {
    value.clear();
    AppendBytesField(1, s.tag, &value);
    value.push_back(0x15);  // simple_value, fixed32
    uint32_t bits;
    std::memcpy(&bits, &s.value, sizeof bits);
    AppendLe(bits, 4, &value);
    AppendBytesField(1, value, &summary);
  }
  std::string event = EventHeader(wall_time, step);
  AppendBytesField(5, summary, &event);
  return event;
}

std::optional<std::string_view> ReadTfRecord(std::string_view in, size_t* pos) {
  std::string_view rest = in.substr(*pos);
  if (rest.size() < 12) return std::nullopt;
  if (ReadLe(rest.substr(8), 4) != MaskedCrc32c(rest.substr(0, 8))) return std::nullopt;
  uint64_t len = ReadLe(rest, 8);
  if (rest.size() - 12 < len || rest.size() - 12 - len < 4) return std::nullopt;
  std::string_view data = rest.substr(12, len);
  if (ReadLe(rest.substr(12 + len), 4) != MaskedCrc32c(data)) return std::nullopt;
  *pos += 16 + len;
  return data;
}

}  // namespace tv
