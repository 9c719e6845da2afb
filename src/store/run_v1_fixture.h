// For the record tests: the files of tests/fixtures/run_v1, a run directory
// written by 0.1.0 (its README.md says how), which every record reads back
// byte for byte.
#pragma once

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace tv {

// The text of the fixture's file `name` ("summary.json", "events.jsonl").
inline std::string RunV1Text(const std::string& name) {
  std::ifstream in(std::string(TRAINVITALS_FIXTURES_DIR) + "/run_v1/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The fixture's JSON file `name`, its keys in their order.
inline nlohmann::ordered_json RunV1Json(const std::string& name) {
  return nlohmann::ordered_json::parse(RunV1Text(name));
}

}  // namespace tv
