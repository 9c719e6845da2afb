// The few protobuf wire-format pieces our hand-written encoders need
// (tfevents, VisualDL): varints, little-endian fixed fields and
// length-delimited fields; and a reader of a message's fields (the kubelet's
// pod-resources answer). Pure; thread-safe.
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

// Reads a message's fields in order: each field's number, and its bytes when
// it is length-delimited (a string, bytes or an embedded message); the other
// wire types are skipped over.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}

  // The next field; false at the end of the message, or when it is
  // malformed (then `malformed()`).
  bool Next(uint32_t* field, std::string_view* bytes) {
    *bytes = {};
    if (in_.empty()) return false;
    uint64_t key = 0;
    if (!Varint(&key) || (key >> 3) == 0 || (key >> 3) > UINT32_MAX) return Fail();
    *field = static_cast<uint32_t>(key >> 3);
    uint64_t length = 0;
    switch (key & 7) {
      case 0:
        return Varint(&length) || Fail();
      case 1:
        return Skip(8);
      case 5:
        return Skip(4);
      case 2:
        if (!Varint(&length) || length > in_.size()) return Fail();
        *bytes = in_.substr(0, length);
        in_.remove_prefix(length);
        return true;
      default:  // groups (3, 4) and the undefined 6 and 7
        return Fail();
    }
  }
  bool malformed() const { return malformed_; }

 private:
  bool Varint(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64 && !in_.empty(); shift += 7) {
      auto byte = static_cast<uint8_t>(in_.front());
      in_.remove_prefix(1);
      *v |= static_cast<uint64_t>(byte & 0x7F) << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return false;
  }
  bool Skip(size_t n) {
    if (in_.size() < n) return Fail();
    in_.remove_prefix(n);
    return true;
  }
  bool Fail() {
    malformed_ = true;
    in_ = {};
    return false;
  }

  std::string_view in_;
  bool malformed_ = false;
};

}  // namespace tv::wire
