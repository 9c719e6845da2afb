// The run directory (DESIGN.md's contract): where meta.json, samples.jsonl,
// events.jsonl and summary.json of one run live.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/config.h"

namespace tv {

// A short name for a run from its command: the script of "python train.py"
// ("train"), else the program's base name.
std::string DefaultRunName(const std::vector<std::string>& command);

// Creates the run directory for `config` (making parents) and proves it is
// writable by creating a file in it. Called before the child starts. Throws
// ConfigError saying which directory and why.
std::string PrepareRunDir(const Config& config, const std::vector<std::string>& command,
                          double now_wall);

// Writes `j` to `path` atomically (temporary file, then rename): a reader sees
// the old file or the new one, never half of one. Returns false
// and, when `say`, says why on stderr when it fails.
bool WriteJsonFile(const std::string& path, const nlohmann::ordered_json& j, bool say = true);

}  // namespace tv
