// `trainvitals top --json`: one refresh as a JSON document, in SI base units
// (docs/cli.md#top); an unknown value is null.
#pragma once

#include <nlohmann/json.hpp>

#include "views/top/top_model.h"

namespace tv {

nlohmann::ordered_json TopJson(const TopModel& model);

}  // namespace tv
