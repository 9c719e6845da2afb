#include "markers/stale_dirs.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "markers/protocol.h"

namespace tv::stale_dirs_test {
namespace {
namespace fs = std::filesystem;

int DeadPid() {
  pid_t pid = ::fork();
  if (pid == 0) _exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

fs::path MarkerDir(const fs::path& tmp, const std::string& suffix, int owner) {
  fs::path dir = tmp / ("trainvitals-" + suffix);
  fs::create_directories(dir);
  std::ofstream(dir / kStepsFileName) << "x";
  std::ofstream(dir / kOwnerFileName) << owner << "\n";
  return dir;
}

TEST(StaleMarkerDirs, RemovesOnlyThoseWhoseOwnerIsGone) {
  fs::path tmp = fs::path(::testing::TempDir()) / "tv_stale_dirs";
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  fs::path dead = MarkerDir(tmp, "dead01", DeadPid());
  fs::path alive = MarkerDir(tmp, "live01", static_cast<int>(::getpid()));
  fs::path foreign = MarkerDir(tmp, "more01", DeadPid());
  std::ofstream(foreign / "notes.txt") << "not ours";
  fs::path unowned = tmp / "trainvitals-young1";  // no owner file, just made
  fs::create_directories(unowned);

  EXPECT_EQ(RemoveStaleMarkerDirs(tmp.string()), 1);
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(alive / kStepsFileName));
  EXPECT_TRUE(fs::exists(foreign / "notes.txt"));
  EXPECT_TRUE(fs::exists(unowned));
  fs::remove_all(tmp);
}

}  // namespace
}  // namespace tv::stale_dirs_test
