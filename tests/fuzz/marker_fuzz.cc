// The marker decoder: any datagram either fails with an error or decodes to a
// marker that encodes and decodes again to the same marker.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "markers/protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string error;
  auto marker =
      tv::ParseMarker(std::string_view(reinterpret_cast<const char*>(data), size), &error);
  if (!marker) {
    if (error.empty()) std::abort();
    return 0;
  }
  std::string again = tv::EncodeMarker(*marker);
  auto decoded = tv::ParseMarker(again, &error);
  if (!decoded) std::abort();
  if (tv::EncodeMarker(*decoded) != again) std::abort();
  return 0;
}
