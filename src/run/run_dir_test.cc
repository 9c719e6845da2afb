#include "run/run_dir.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace tv::run_dir_test {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

// A runs directory of its own, removed at the end.
class RunsDir : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("tv-run-dir-test-{}-{}", ::getpid(),
                       testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A run directory `dir` whose meta.json names it `name` and ran `command`.
  std::string AddRun(const std::string& dir, const std::string& name,
                     std::vector<std::string> command, double start_t) {
    fs::create_directories(dir_ / dir);
    Json meta = {{"schema_version", 1}, {"name", name}, {"command", command}, {"start_t", start_t}};
    std::ofstream(dir_ / dir / "meta.json") << meta.dump();
    return (dir_ / dir).string();
  }

  fs::path dir_;
};

TEST(RunLabel, IsTheGivenNameElseTheScript) {
  auto RunLabel = [](const Json& meta) { return tv::RunLabel(MetaFromJson(meta)); };
  EXPECT_EQ(RunLabel(Json{{"name", "resnet-bs256"}, {"command", {"python", "train.py"}}}),
            "resnet-bs256");
  EXPECT_EQ(RunLabel(Json{{"name", "train"}, {"command", {"python3", "src/train.py", "--lr=1"}}}),
            "train.py");
  EXPECT_EQ(RunLabel(Json{{"name", "pkg.train"}, {"command", {"python", "-m", "pkg.train"}}}),
            "pkg.train");
  EXPECT_EQ(RunLabel(Json{{"name", "sleep"}, {"command", {"/bin/sleep", "1"}}}), "sleep");
  EXPECT_EQ(RunLabel(Json{{"name", "old"}}), "old");  // no command
  EXPECT_EQ(RunLabel(Json::object()), "");
}

TEST(DefaultRunName, IsTheScriptsStemOrTheModuleOrTheProgram) {
  EXPECT_EQ(DefaultRunName({"python3", "-u", "dir/train.py"}), "train");
  EXPECT_EQ(DefaultRunName({"python", "-m", "pkg.mod"}), "pkg.mod");
  EXPECT_EQ(DefaultRunName({"python", "-c", "print(1)"}), "python");
  EXPECT_EQ(DefaultRunName({"/usr/bin/torchrun", "x.py"}), "torchrun");
  EXPECT_EQ(DefaultRunName({}), "run");
}

TEST_F(RunsDir, ANameIsTheNewestRunOfThatName) {
  AddRun("20261201-142703-resnet", "resnet", {"python", "train.py"}, 1000);
  std::string newer = AddRun("20261201-152703-resnet", "resnet", {"python", "train.py"}, 2000);
  AddRun("20261201-162703-other", "other", {"python", "train.py"}, 3000);
  EXPECT_EQ(ResolveRunDir("resnet", dir_.string()), newer);
  // The script an unnamed run is listed as names it too.
  std::string script = AddRun("20261201-172703-train", "train", {"python", "train.py"}, 4000);
  EXPECT_EQ(ResolveRunDir("train.py", dir_.string()), script);
  EXPECT_EQ(ResolveRunDir("train", dir_.string()), script);
}

TEST_F(RunsDir, PathsAndDirectoryNamesComeFirst) {
  std::string a = AddRun("20261201-142703-resnet", "resnet", {"python", "train.py"}, 1000);
  // A directory named like a run's name is the directory.
  std::string named = AddRun("other", "resnet", {"python", "train.py"}, 5000);
  EXPECT_EQ(ResolveRunDir(a, "/nonexistent"), a);
  EXPECT_EQ(ResolveRunDir("20261201-142703-resnet", dir_.string()), a);
  EXPECT_EQ(ResolveRunDir("other", dir_.string()), named);
  fs::create_directory_symlink("20261201-142703-resnet", dir_ / "latest");
  EXPECT_EQ(ResolveRunDir("latest", dir_.string()), (dir_ / "latest").string());
}

TEST_F(RunsDir, NoRunOfThatNameSaysWhichAreNear) {
  AddRun("20261201-142703-resnet", "resnet", {"python", "train.py"}, 1000);
  AddRun("20261201-152703-resnet2", "resnet2", {"python", "train.py"}, 2000);
  AddRun("20261201-162703-vit", "vit", {"python", "train.py"}, 3000);
  try {
    ResolveRunDir("resnt", dir_.string());
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              fmt::format("resnt: no such run directory (nor {0}/resnt), nor a run named so in "
                          "{0}; did you mean 'resnet' or 'resnet2'?",
                          dir_.string()));
  }
  try {
    ResolveRunDir("bert", dir_.string());
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              fmt::format("bert: no such run directory (nor {0}/bert), nor a run named so in {0}",
                          dir_.string()));
  }
  EXPECT_THROW(ResolveRunDir("/nonexistent/run", dir_.string()), ConfigError);
}

}  // namespace
}  // namespace tv::run_dir_test
