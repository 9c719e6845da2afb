// Test helper: the text of a file under tests/fixtures. Used by the source tests
// only (TRAINVITALS_FIXTURES_DIR is defined for the test binary).
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace tv::test_fixtures {

inline std::string Fixture(const std::string& relative_path) {
  std::ifstream in(std::string(TRAINVITALS_FIXTURES_DIR) + "/" + relative_path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace tv::test_fixtures
