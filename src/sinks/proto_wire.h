// The few protobuf wire-format pieces our hand-written encoders need
// (tfevents, VisualDL): varints, little-endian fixed fields and
// length-delimited fields. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tv::wire {

inline void AppendVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// The low `bytes` bytes of `v`, least significant first.
inline void AppendLe(uint64_t v, int bytes, std::string* out) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

// A length-delimited field (string, bytes, embedded message).
inline void AppendBytesField(uint32_t field, std::string_view bytes, std::string* out) {
  AppendVarint((field << 3) | 2, out);
  AppendVarint(bytes.size(), out);
  out->append(bytes);
}

}  // namespace tv::wire
