// The samples.jsonl reader of `trainvitals export`: any file either becomes
// CSV or throws ConfigError.
#include <cstddef>
#include <cstdint>
#include <sstream>

#include "core/config.h"
#include "fuzz_file.h"
#include "sinks/csv_export.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = tv::fuzz::WriteScratchFile(data, size, ".jsonl");
  std::ostringstream csv;
  try {
    tv::ExportCsv(path, csv);
  } catch (const tv::ConfigError&) {
  }
  return 0;
}
