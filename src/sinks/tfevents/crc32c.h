// CRC-32C (Castagnoli) and the masking TFRecord framing applies to it.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

namespace tv {

// CRC-32C of `data`: reflected polynomial 0x82F63B78, init and final xor ~0.
uint32_t Crc32c(std::string_view data);
// TFRecord's mask: ((c >> 15) | (c << 17)) + 0xa282ead8.
uint32_t MaskCrc32c(uint32_t crc);
inline uint32_t MaskedCrc32c(std::string_view data) { return MaskCrc32c(Crc32c(data)); }

}  // namespace tv
