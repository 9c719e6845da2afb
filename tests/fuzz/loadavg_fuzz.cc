// /proc/loadavg.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "sources/load_average.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto load = tv::ParseLoadAvg(std::string_view(reinterpret_cast<const char*>(data), size));
  if (load && (!(load->load1 >= 0) || !(load->load5 >= 0) || !(load->load15 >= 0))) std::abort();
  return 0;
}
