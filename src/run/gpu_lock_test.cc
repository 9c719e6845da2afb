#include "run/gpu_lock.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace tv::gpu_lock_test {
namespace {
namespace fs = std::filesystem;
using Kind = GpuLockState::Kind;

TEST(GpuLockHolder, SaysWhoTheKernelNames) {
  EXPECT_EQ(DescribeHolder({"alice", 4242, "python3"}),
            "held by pid 4242 (python3), lock file of alice");
  EXPECT_EQ(DescribeHolder({"root", 17, ""}),
            "held by processes that inherited it from pid 17 (exited), lock file of root");
  EXPECT_EQ(DescribeHolder({"bob", std::nullopt, ""}),
            "held by a process the kernel does not name, lock file of bob");
  // A holder's name is its own choosing: no terminal control reaches the message.
  EXPECT_EQ(DescribeHolder({"eve", 99, "x\x1b[2J"}),
            "held by pid 99 (x\u241b[2J), lock file of eve");
}

TEST(GpuLockHolder, NamesOnlySafeCharacters) {
  EXPECT_EQ(GpuLockName("GPU-1a2b"), "gpu-GPU-1a2b.lock");
  EXPECT_EQ(GpuLockName("../x/y"), "gpu-___x_y.lock");
}

class GpuLockFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::temp_directory_path() / ("tv-gpulock-test-" + std::to_string(::getpid()));
    fs::remove_all(base_);
    fs::create_directories(base_);
    ::setenv("TRAINVITALS_LOCK_DIR", (base_ / "locks").c_str(), 1);
    std::string error;
    std::optional<LockDir> opened = LockDir::Open(true, &error);
    ASSERT_TRUE(opened) << error;
    dir_.emplace(std::move(*opened));
  }
  void TearDown() override {
    dir_.reset();
    ::unsetenv("TRAINVITALS_LOCK_DIR");
    fs::remove_all(base_);
  }
  fs::path File(const std::string& uuid) { return base_ / "locks" / GpuLockName(uuid); }
  fs::path base_;
  std::optional<LockDir> dir_;
};

TEST_F(GpuLockFiles, TakesAFreeLockAndASecondOpenSeesItHeldByThisProcess) {
  EXPECT_EQ(ProbeGpuLock(*dir_, "GPU-a").kind, Kind::kFree);
  GpuLockState taken = TakeGpuLock(*dir_, "GPU-a");
  ASSERT_EQ(taken.kind, Kind::kLocked) << taken.reason;
  EXPECT_EQ(fs::status(File("GPU-a")).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                fs::perms::others_read);
  GpuLockState again = TakeGpuLock(*dir_, "GPU-a");
  EXPECT_EQ(again.kind, Kind::kHeld);
  EXPECT_EQ(again.holder_pid, ::getpid());
  EXPECT_NE(again.reason.find(std::to_string(::getpid())), std::string::npos) << again.reason;
  EXPECT_EQ(ProbeGpuLock(*dir_, "GPU-a").kind, Kind::kHeld);
  ::close(taken.fd);
  EXPECT_EQ(ProbeGpuLock(*dir_, "GPU-a").kind, Kind::kFree);
}

TEST_F(GpuLockFiles, TheHolderIsNeverReadFromTheFile) {
  { std::ofstream(File("GPU-b")) << "1\n"; }
  int fd = ::open(File("GPU-b").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  GpuLockState state = ProbeGpuLock(*dir_, "GPU-b");
  EXPECT_EQ(state.kind, Kind::kHeld);
  EXPECT_EQ(state.holder_pid, ::getpid());
  EXPECT_EQ(state.reason.find("pid 1 "), std::string::npos) << state.reason;
  ::close(fd);
}

TEST_F(GpuLockFiles, ASymbolicLinkIsNeverFollowedNorItsTargetChanged) {
  fs::path target = base_ / "precious";
  { std::ofstream(target) << "secret"; }
  fs::permissions(target, fs::perms::owner_read | fs::perms::owner_write);
  fs::create_symlink(target, File("GPU-c"));
  GpuLockState state = TakeGpuLock(*dir_, "GPU-c");
  EXPECT_EQ(state.kind, Kind::kUnusable);
  EXPECT_NE(state.reason.find("a symbolic link to " + target.string()), std::string::npos)
      << state.reason;
  EXPECT_EQ(ProbeGpuLock(*dir_, "GPU-c").kind, Kind::kUnusable);
  EXPECT_EQ(fs::status(target).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  std::ifstream in(target);
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "secret");
}

TEST_F(GpuLockFiles, AFifoOrAHardLinkIsRefusedAtOnce) {
  ASSERT_EQ(::mkfifo(File("GPU-d").c_str(), 0666), 0);
  GpuLockState fifo = TakeGpuLock(*dir_, "GPU-d");  // would block without O_NONBLOCK
  EXPECT_EQ(fifo.kind, Kind::kUnusable);
  EXPECT_NE(fifo.reason.find("a FIFO, not a regular file"), std::string::npos) << fifo.reason;
  EXPECT_EQ(ProbeGpuLock(*dir_, "GPU-d").kind, Kind::kUnusable);
  fs::path other = base_ / "other";
  { std::ofstream(other) << "data"; }
  fs::create_hard_link(other, File("GPU-e"));
  GpuLockState linked = TakeGpuLock(*dir_, "GPU-e");
  EXPECT_EQ(linked.kind, Kind::kUnusable);
  EXPECT_NE(linked.reason.find("has 2 hard links"), std::string::npos) << linked.reason;
}

}  // namespace
}  // namespace tv::gpu_lock_test
