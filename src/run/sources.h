// Builds the sources for a run, in the order a tick reads them: host first,
// then the process tree, then GPUs (which attribute device memory to the tree's
// PIDs).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/source.h"

namespace tv {

struct RunSources {
  std::vector<std::unique_ptr<Source>> sources;
  // meta.json's GPU part: {"backend", "driver_version", ..., "gpus": [...]}; null without GPUs.
  nlohmann::json gpu_info;
  // Problems met while opening sources (no GPU driver, ...), said once.
  std::vector<Notice> notices;
};

// `run_dir`: the run directory, whose file system's space the sources watch
// (none when empty).
RunSources MakeSources(const Config& config, int root_pid, const std::string& run_dir);

}  // namespace tv
