// CUDA_VISIBLE_DEVICES against a fixed set of GPUs, two of them with MIG slices.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "sources/gpu_visible.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<tv::GpuIdentity> gpus = {
      {"GPU-8f3c2a10-0000-1111-2222-333344445555", {}},
      {"GPU-8f3d9b77-aaaa-bbbb-cccc-ddddeeeeffff",
       {{"MIG-11111111-2222-3333-4444-555555555555", 1},
        {"MIG-11112222-2222-3333-4444-555555555555", 2}}},
      {"GPU-01234567-89ab-cdef-0123-456789abcdef",
       {{"MIG-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", 7}}},
  };
  std::string_view cvd(reinterpret_cast<const char*>(data), size);
  for (const tv::VisibleDevice& d : tv::ResolveVisibleDevices(cvd, gpus)) {
    if (d.physical_index < 0 || d.physical_index >= static_cast<int>(gpus.size())) std::abort();
  }
  return 0;
}
