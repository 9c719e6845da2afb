#include "markers/stale_dirs.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
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

TEST(StaleMarkerDirs, AnOwnerOfAnotherPidNamespaceThatStillListensKeepsItsDirectory) {
  fs::path tmp = fs::path(::testing::TempDir()) / "tv_stale_listening";
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  // Its owner's pid names no process here, as one of another namespace would.
  fs::path dir = MarkerDir(tmp, "node01", DeadPid());
  int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::string path = (dir / kMarkerSocketName).string();
  ASSERT_LT(path.size(), sizeof(addr.sun_path));
  std::memcpy(addr.sun_path, path.data(), path.size());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  EXPECT_EQ(RemoveStaleMarkerDirs(tmp.string()), 0);
  EXPECT_TRUE(fs::exists(dir / kStepsFileName));
  ::close(fd);  // the owner ends without cleaning up: now it is stale
  EXPECT_EQ(RemoveStaleMarkerDirs(tmp.string()), 1);
  fs::remove_all(tmp);
}

}  // namespace
}  // namespace tv::stale_dirs_test
