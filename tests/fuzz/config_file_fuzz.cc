// The TOML config file (--config): any file either applies or throws
// ConfigError; what applies then validates or throws ConfigError.
#include <cstddef>
#include <cstdint>

#include "core/config.h"
#include "fuzz_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = tv::fuzz::WriteScratchFile(data, size, ".toml");
  tv::Config config;
  try {
    tv::ApplyConfigFile(path, config);
    tv::Validate(config);
  } catch (const tv::ConfigError&) {
  }
  return 0;
}
