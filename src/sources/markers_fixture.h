// A marker endpoint with its source, for the marker source's unit tests: real
// clients connect to it in the same process and the test reads ticks.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "sources/markers.h"

namespace tv {

struct MarkerSourceFixture {
  MarkerSourceFixture() {
    std::string error;
    endpoint = MarkerEndpoint::Create(1.0, &error);
    EXPECT_TRUE(endpoint) << error;
    source = std::make_unique<MarkerSource>(endpoint.get());
  }
  // One row tick at monotonic second `mono_s`.
  Sample Read(double mono_s) {
    Sample s;
    source->Read(Tick{mono_s, true}, &s, &notices);
    return s;
  }
  std::unique_ptr<MarkerEndpoint> endpoint;
  std::unique_ptr<MarkerSource> source;
  std::vector<Notice> notices;
};

}  // namespace tv
