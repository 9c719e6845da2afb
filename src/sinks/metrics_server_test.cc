#include "sinks/metrics_server.h"

#include <gtest/gtest.h>

#include "core/config.h"

namespace tv {
namespace {

TEST(MetricsServer, PicksAFreePortForPortZero) {
  MetricsServer server(ListenAddress{"127.0.0.1", 0});
  EXPECT_GT(server.port(), 0);
}

TEST(MetricsServer, PortInUseIsAConfigError) {
  MetricsServer first(ListenAddress{"127.0.0.1", 0});
  try {
    MetricsServer second(ListenAddress{"127.0.0.1", first.port()});
    FAIL() << "bound a port in use";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot listen on 127.0.0.1:"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tv
