// What this machine offers trainvitals, for `trainvitals check`: the process
// tree interface, cgroup limits, RAPL readability and GPUs. Built as JSON (the
// --json output) and rendered as text from that JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/env.h"

namespace tv {

nlohmann::ordered_json CheckMachine(Env* env);
std::string FormatMachineCheck(const nlohmann::ordered_json& check);

}  // namespace tv
