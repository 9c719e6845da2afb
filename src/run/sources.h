// Builds the sources for a run, in the order a tick reads them: host first,
// then the process tree, then devices (which attribute to the tree's PIDs).
#pragma once

#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config.h"
#include "core/source.h"

namespace tv {

std::vector<std::unique_ptr<Source>> MakeSources(const Config& config, int root_pid);

}  // namespace tv
