// The TensorBoard event encoder round trip: a scalar event built from the
// input is framed, read back with ReadTfRecord and decoded by the small
// protobuf reader below; wall time, step, tags and values must come back bit
// for bit. The rest of the input is also fed to ReadTfRecord as a file.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sinks/tfevents/event_encoder.h"

namespace {

// A protobuf reader for exactly the fields EncodeScalarEvent writes.
struct Reader {
  std::string_view in;
  bool ok = true;

  bool Done() const { return in.empty() || !ok; }
  uint64_t Varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (in.empty()) break;
      auto byte = static_cast<uint8_t>(in[0]);
      in.remove_prefix(1);
      v |= uint64_t{byte & 0x7Fu} << shift;
      if ((byte & 0x80) == 0) return v;
    }
    ok = false;
    return 0;
  }
  uint64_t Fixed(int bytes) {
    if (in.size() < static_cast<size_t>(bytes)) {
      ok = false;
      return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= uint64_t{static_cast<uint8_t>(in[i])} << (8 * i);
    in.remove_prefix(bytes);
    return v;
  }
  std::string_view Bytes() {
    uint64_t len = Varint();
    if (!ok || len > in.size()) {
      ok = false;
      return {};
    }
    std::string_view out = in.substr(0, len);
    in.remove_prefix(len);
    return out;
  }
};

struct DecodedEvent {
  uint64_t wall_time_bits = 0;
  int64_t step = 0;
  std::vector<std::pair<std::string, uint32_t>> values;  // tag, simple_value bits
};

std::optional<DecodedEvent> Decode(std::string_view data) {
  DecodedEvent event;
  Reader r{data};
  while (!r.Done()) {
    uint64_t key = r.Varint();
    if (key == 0x09) {
      event.wall_time_bits = r.Fixed(8);
    } else if (key == 0x10) {
      event.step = static_cast<int64_t>(r.Varint());
    } else if (key == 0x2A) {
      Reader summary{r.Bytes()};
      while (!summary.Done()) {
        if (summary.Varint() != 0x0A) return std::nullopt;
        Reader value{summary.Bytes()};
        std::string tag;
        uint32_t bits = 0;
        while (!value.Done()) {
          uint64_t field = value.Varint();
          if (field == 0x0A) {
            tag = value.Bytes();
          } else if (field == 0x15) {
            bits = static_cast<uint32_t>(value.Fixed(4));
          } else {
            return std::nullopt;
          }
        }
        if (!value.ok) return std::nullopt;
        event.values.emplace_back(std::move(tag), bits);
      }
      if (!summary.ok) return std::nullopt;
    } else {
      return std::nullopt;
    }
  }
  if (!r.ok) return std::nullopt;
  return event;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  double wall_time = in.ConsumeFloatingPoint<double>();
  auto step = in.ConsumeIntegral<int64_t>();
  std::vector<tv::TbScalar> scalars(in.ConsumeIntegralInRange<size_t>(0, 8));
  for (tv::TbScalar& s : scalars) {
    s.tag = in.ConsumeRandomLengthString(200);
    s.value = in.ConsumeFloatingPoint<float>();
  }

  std::string file;
  tv::AppendTfRecord(tv::EncodeScalarEvent(wall_time, step, scalars), &file);
  size_t pos = 0;
  auto record = tv::ReadTfRecord(file, &pos);
  if (!record || pos != file.size()) std::abort();
  // A cut record is never read.
  size_t cut_pos = 0;
  if (tv::ReadTfRecord(std::string_view(file).substr(0, file.size() - 1), &cut_pos)) std::abort();

  auto event = Decode(*record);
  if (!event) std::abort();
  uint64_t wall_bits;
  std::memcpy(&wall_bits, &wall_time, sizeof wall_bits);
  if (event->wall_time_bits != wall_bits || event->step != step) std::abort();
  if (event->values.size() != scalars.size()) std::abort();
  for (size_t i = 0; i < scalars.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &scalars[i].value, sizeof bits);
    if (event->values[i].first != scalars[i].tag || event->values[i].second != bits) std::abort();
  }

  // The rest of the input as an event file: records are read until one fails.
  std::string rest = in.ConsumeRemainingBytesAsString();
  for (size_t at = 0; at < rest.size() && tv::ReadTfRecord(rest, &at);) {
  }
  return 0;
}
