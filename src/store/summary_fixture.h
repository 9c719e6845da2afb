// For the tests: a summary.json given as JSON, read as every reader of a run
// directory reads it (store/run_summary.h), the read checked.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "store/run_summary.h"

namespace tv {

inline RunSummary SummaryOfJson(const nlohmann::ordered_json& j) {
  RunSummary s;
  Status read = RunSummaryFromJson(j, &s);
  EXPECT_TRUE(read.ok()) << read.message() << " in " << j.dump();
  return s;
}

}  // namespace tv
