#include "run/lock_dir.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace tv::lock_dir_test {
namespace {
namespace fs = std::filesystem;

struct stat Dir(mode_t mode, uid_t uid) {
  struct stat st {};
  st.st_mode = S_IFDIR | mode;
  st.st_uid = uid;
  return st;
}

TEST(LockDir, SafeWhenStickyAndSharedOrPrivateAndOwnedByRootOrTheCaller) {
  EXPECT_EQ(LockDirProblem(Dir(01777, 0), 1000), "");
  EXPECT_EQ(LockDirProblem(Dir(01777, 1000), 1000), "");
  EXPECT_EQ(LockDirProblem(Dir(0755, 0), 1000), "");
  EXPECT_EQ(LockDirProblem(Dir(0700, 1000), 1000), "");
}

TEST(LockDir, RefusesAnotherOwnerSharedWithoutStickyAndNonDirectories) {
  EXPECT_NE(LockDirProblem(Dir(01777, 1001), 1000).find("is owned by"), std::string::npos);
  EXPECT_NE(LockDirProblem(Dir(01777, 1001), 0).find("not by root or you"), std::string::npos);
  EXPECT_NE(LockDirProblem(Dir(0777, 0), 1000).find("has mode 0777"), std::string::npos);
  EXPECT_NE(LockDirProblem(Dir(0775, 1000), 1000).find("has mode 0775"), std::string::npos);
  struct stat link = Dir(0777, 0);
  link.st_mode = S_IFLNK | 0777;
  EXPECT_EQ(LockDirProblem(link, 0), "is a symbolic link, not a directory");
}

class LockDirOpen : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::temp_directory_path() / ("tv-lockdir-test-" + std::to_string(::getpid()));
    fs::remove_all(base_);
    fs::create_directories(base_);
    path_ = base_ / "locks";
    ::setenv("TRAINVITALS_LOCK_DIR", path_.c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("TRAINVITALS_LOCK_DIR");
    fs::remove_all(base_);
  }
  fs::path base_, path_;
};

TEST_F(LockDirOpen, MakesItStickyAndSharedPastTheUmask) {
  mode_t old = ::umask(077);
  std::string error;
  std::optional<LockDir> dir = LockDir::Open(true, &error);
  ::umask(old);
  ASSERT_TRUE(dir) << error;
  struct stat st {};
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 01777u);
}

TEST_F(LockDirOpen, AMissingDirectoryIsNotMadeWhenOnlyLooking) {
  std::string error = "x";
  EXPECT_FALSE(LockDir::Open(false, &error));
  EXPECT_EQ(error, "");
  EXPECT_FALSE(fs::exists(path_));
}

TEST_F(LockDirOpen, NeverFollowsASymbolicLink) {
  fs::create_directories(base_ / "elsewhere");
  fs::permissions(base_ / "elsewhere", fs::perms::all | fs::perms::sticky_bit);
  fs::create_directory_symlink(base_ / "elsewhere", path_);
  std::string error;
  EXPECT_FALSE(LockDir::Open(true, &error));
  EXPECT_NE(error.find("is a symbolic link"), std::string::npos) << error;
  EXPECT_NE(error.find("install -d -m 1777 -o root"), std::string::npos) << error;
}

TEST_F(LockDirOpen, RefusesADirectoryEveryoneMayRewrite) {
  fs::create_directories(path_);
  fs::permissions(path_, fs::perms::all);
  std::string error;
  EXPECT_FALSE(LockDir::Open(true, &error));
  EXPECT_NE(error.find("has mode 0777"), std::string::npos) << error;
}

}  // namespace
}  // namespace tv::lock_dir_test
