#include "markers/stale_dirs.h"

#include <gtest/gtest.h>
#include <linux/magic.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "markers/endpoint.h"
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

// An environment variable set for one scope, restored after it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// The endpoint's directory is in this user's trainvitals-<uid> under TMPDIR,
// where the look for stale ones reads a few entries; directly in TMPDIR when
// that name is not this user's private directory.
TEST(StaleMarkerDirs, EndpointsLiveInTheUsersOwnDirectoryUnlessAnotherMadeIt) {
  fs::path tmp = fs::path(::testing::TempDir()) / "tv_marker_parent";
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  ScopedEnv tmpdir("TMPDIR", tmp.c_str());
  fs::path mine = tmp / ("trainvitals-" + std::to_string(::getuid()));
  std::string error;
  {
    auto e = MarkerEndpoint::Create(1.0, &error);
    ASSERT_NE(e, nullptr) << error;
    EXPECT_EQ(fs::path(e->socket_path()).parent_path().parent_path(), mine);
    EXPECT_EQ(fs::status(mine).permissions() & fs::perms::all, fs::perms::owner_all);
  }
  fs::remove_all(mine);
  fs::create_directories(mine);
  fs::permissions(mine, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec);
  {
    auto e = MarkerEndpoint::Create(1.0, &error);
    ASSERT_NE(e, nullptr) << error;
    EXPECT_EQ(fs::path(e->socket_path()).parent_path().parent_path(), tmp);
  }
  // A TMPDIR long enough that the socket's path in the user's directory would
  // not fit a socket address (107 bytes): directly in TMPDIR.
  ASSERT_LT(tmp.string().size(), 60u);
  fs::path deep = tmp / std::string(72 - tmp.string().size(), 'd');  // 73 bytes
  fs::create_directories(deep);
  {
    ScopedEnv deep_tmpdir("TMPDIR", deep.c_str());
    auto e = MarkerEndpoint::Create(1.0, &error);
    ASSERT_NE(e, nullptr) << error;
    EXPECT_EQ(fs::path(e->socket_path()).parent_path().parent_path(), deep);
  }
  fs::remove_all(tmp);
}

// Where TMPDIR does not say: in memory, the user's runtime directory first,
// so that a run makes and removes no file on a disk.
TEST(StaleMarkerDirs, WithoutTmpdirTheEndpointsLiveInMemory) {
  fs::path runtime = fs::path(::testing::TempDir()) / "tv_marker_runtime";
  fs::remove_all(runtime);
  fs::create_directories(runtime);
  ScopedEnv no_tmpdir("TMPDIR", nullptr);
  std::string error;
  {
    ScopedEnv xdg("XDG_RUNTIME_DIR", runtime.c_str());
    auto e = MarkerEndpoint::Create(1.0, &error);
    ASSERT_NE(e, nullptr) << error;
    EXPECT_EQ(fs::path(e->socket_path()).parent_path().parent_path(), runtime / "trainvitals");
    EXPECT_EQ(fs::status(runtime / "trainvitals").permissions() & fs::perms::all,
              fs::perms::owner_all);
  }
  {
    ScopedEnv xdg("XDG_RUNTIME_DIR", nullptr);
    struct statfs shm {};
    bool memory = ::statfs("/dev/shm", &shm) == 0 && shm.f_type == TMPFS_MAGIC;
    auto e = MarkerEndpoint::Create(1.0, &error);
    ASSERT_NE(e, nullptr) << error;
    fs::path mine =
        std::string(memory ? "/dev/shm" : "/tmp") + "/trainvitals-" + std::to_string(::getuid());
    EXPECT_EQ(fs::path(e->socket_path()).parent_path().parent_path(), mine);
  }
  fs::remove_all(runtime);
}

}  // namespace
}  // namespace tv::stale_dirs_test
