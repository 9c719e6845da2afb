#include "core/config.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/event_type.h"
#include "core/metrics.h"

namespace tv::config_test {
namespace {

std::string WriteTemp(const std::string& text) {
  // One file per test: ctest runs the tests of this binary in parallel.
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string path = ::testing::TempDir() + "/tv_config_" + test->name() + ".toml";
  std::ofstream(path) << text;
  return path;
}

std::string ReadSourceFile(const std::string& rel) {
  std::ifstream in(std::string(TRAINVITALS_SOURCE_DIR) + "/" + rel);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Config, FileOverridesDefaults) {
  Config c;
  ApplyConfigFile(WriteTemp("sample_hz = 20\ninterval = 2.5\nquiet = true\ngpus = [0, 2]\n"), c);
  EXPECT_EQ(c.sample_hz, 20);
  EXPECT_EQ(c.interval_s, 2.5);
  EXPECT_TRUE(c.quiet);
  EXPECT_EQ(c.gpus, (std::vector<int>{0, 2}));
}

TEST(Config, UnknownKeyNamesFileAndLine) {
  Config c;
  std::string path = WriteTemp("interval = 1\n\nsampel_hz = 3\n");
  try {
    ApplyConfigFile(path, c);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              path + ":3: unknown key 'sampel_hz' (did you mean 'sample_hz'?)");
  }
}

TEST(Config, UnknownKeySuggestsTheNearKeyOnlyForATypo) {
  EXPECT_EQ(NearestKey("intervall"), "interval");
  EXPECT_EQ(NearestKey("tensorbord"), "tensorboard");
  EXPECT_EQ(NearestKey("colour"), "");
  EXPECT_EQ(NearestKey("gpu"), "gpus");
  EXPECT_EQ(NearestKey("ou"), "");  // one edit from "out", but half the key
  Config c;
  std::string path = WriteTemp("intervall = 2\n");
  try {
    ApplyConfigFile(path, c);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              path + ":1: unknown key 'intervall' (did you mean 'interval'?)");
  }
}

TEST(Config, MissingFileSaysSoPlainly) {
  Config c;
  std::string path = ::testing::TempDir() + "/tv_no_such_config.toml";
  try {
    ApplyConfigFile(path, c);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "config file " + path + " does not exist");
  }
}

TEST(Config, BadValueSaysWhatIsWrong) {
  Config c;
  std::string path = WriteTemp("sample_hz = 0\n");
  EXPECT_THROW(ApplyConfigFile(path, c), ConfigError);
  try {
    ApplyConfigFile(path, c);
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
  }
}

TEST(Config, SyntaxErrorNamesLine) {
  Config c;
  std::string path = WriteTemp("interval = = 2\n");
  try {
    ApplyConfigFile(path, c);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path + ":1:", 0), 0u) << e.what();
  }
}

TEST(Config, FlagParsersRejectGarbage) {
  Config c;
  const OptionDef* hz = FindOptionByKey("sample_hz");
  ASSERT_NE(hz, nullptr);
  EXPECT_THROW(hz->set(c, "10x"), ConfigError);
  EXPECT_THROW(hz->set(c, "nan"), ConfigError);
  EXPECT_THROW(FindOptionByKey("gpus")->set(c, "0,,1"), ConfigError);
  EXPECT_THROW(FindOptionByKey("quiet")->set(c, "maybe"), ConfigError);
}

TEST(Config, GpusAutoClaimsTheFreestAndReplacesAList) {
  Config c;
  const OptionDef* gpus = FindOptionByKey("gpus");
  gpus->set(c, "0,2");
  gpus->set(c, "auto:2");
  EXPECT_EQ(c.gpus_auto, 2);
  EXPECT_TRUE(c.gpus.empty());
  EXPECT_EQ(gpus->get(c), "auto:2");
  gpus->set(c, "1");
  EXPECT_EQ(c.gpus_auto, 0);
  for (const char* bad : {"auto:0", "auto:", "auto:1,2", "auto:x", "auto:65"}) {
    try {
      gpus->set(c, bad);
      ADD_FAILURE() << bad;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("auto:N"), std::string::npos) << e.what();
    }
  }
}

TEST(Config, IntervalShorterThanOneSampleIsRejected) {
  Config c;
  c.sample_hz = 10;
  c.interval_s = 0.05;
  EXPECT_THROW(Validate(c), ConfigError);
  c.interval_s = 0.1;
  EXPECT_NO_THROW(Validate(c));
}

// The generated block as scripts/gen-docs.sh writes it: trailing newlines trimmed.
std::string Trimmed(std::string s, std::string_view block = "") {
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s + "\n<!-- end generated" + (block.empty() ? "" : " " + std::string(block)) + " -->";
}

TEST(Docs, CliDocListsEveryOptionAsGenerated) {
  EXPECT_NE(ReadSourceFile("docs/cli.md").find(Trimmed(OptionsMarkdown())), std::string::npos)
      << "docs/cli.md is stale: run `make docs`";
}

TEST(Docs, SchemaDocListsEveryMetricAsGenerated) {
  EXPECT_NE(ReadSourceFile("docs/schema.md").find(Trimmed(MetricsMarkdown())), std::string::npos)
      << "docs/schema.md is stale: run `make docs`";
}

TEST(Docs, SchemaDocListsEveryEventTypeAsGenerated) {
  EXPECT_NE(ReadSourceFile("docs/schema.md").find(Trimmed(EventsMarkdown(), "events")),
            std::string::npos)
      << "docs/schema.md is stale: run `make docs`";
}

}  // namespace
}  // namespace tv::config_test
