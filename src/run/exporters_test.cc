#include "run/exporters.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "sinks/jsonl_sink.h"

namespace tv::exporters_test {
namespace {
namespace fs = std::filesystem;

std::string FreshDir(const std::string& name) {
  std::string dir = ::testing::TempDir() + "/tv_exporters_" + name + std::to_string(::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Points the live sessions directory at a fresh one for the test's span.
class PrivateRuntimeDir {
 public:
  PrivateRuntimeDir() {
    const char* before = std::getenv("XDG_RUNTIME_DIR");
    if (before != nullptr) saved_ = before;
    had_ = before != nullptr;
    std::string dir = FreshDir("runtime");
    fs::permissions(dir, fs::perms::owner_all);
    ::setenv("XDG_RUNTIME_DIR", dir.c_str(), 1);
  }
  ~PrivateRuntimeDir() {
    if (had_) {
      ::setenv("XDG_RUNTIME_DIR", saved_.c_str(), 1);
    } else {
      ::unsetenv("XDG_RUNTIME_DIR");
    }
  }

 private:
  std::string saved_;
  bool had_ = false;
};

TEST(Exporters, QuietWithoutEndpointsWritesTheJsonlFirst) {
  PrivateRuntimeDir runtime;
  Config config;
  config.quiet = true;
  Exporters exporters(config);
  EXPECT_EQ(exporters.metrics_url(), "");
  EXPECT_EQ(exporters.OpenBoards(1800000000), "");
  std::string dir = FreshDir("run");
  MetaRecord meta;
  meta.host = "h";
  LiveIdentity run{::getpid(), ::getpid(), "run", "t", {"true"}, dir, 1800000000, 1};
  std::vector<Sink*> sinks = exporters.MakeSinks(ExporterContext{run, &meta, nullptr, 60});
  ASSERT_NE(exporters.jsonl(), nullptr);
  ASSERT_FALSE(sinks.empty());
  EXPECT_EQ(sinks.front(), static_cast<const Sink*>(exporters.jsonl()));
  // samples.jsonl, the live file and the tfevents a training may ask for.
  EXPECT_EQ(sinks.size(), 3u);
  EXPECT_TRUE(fs::exists(dir + "/samples.jsonl"));
  for (Sink* sink : sinks) sink->OnClose();
}

TEST(Exporters, AWrongPrometheusAddressIsASetupError) {
  Config config;
  config.quiet = true;
  config.prometheus = "not an address:x";
  EXPECT_THROW(Exporters exporters(config), ConfigError);
}

}  // namespace
}  // namespace tv::exporters_test
