#include "core/private_path.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace tv::private_path_test {
namespace {

class PrivatePathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "tv-private-XXXXXX").string();
    dir_ = ::mkdtemp(pattern.data());
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  static mode_t Mode(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
    return st.st_mode & 07777;
  }
  std::string dir_;
};

TEST_F(PrivatePathTest, MakeDirsMakesEachMissingParentWithTheMode) {
  std::string deep = dir_ + "/a/b/c/";
  ASSERT_TRUE(MakeDirs(deep, 0700).ok());
  EXPECT_EQ(Mode(dir_ + "/a"), 0700u);
  EXPECT_EQ(Mode(dir_ + "/a/b"), 0700u);
  EXPECT_EQ(Mode(dir_ + "/a/b/c"), 0700u);
  ::chmod((dir_ + "/a").c_str(), 0755);
  ASSERT_TRUE(MakeDirs(deep, 0700).ok());
  EXPECT_EQ(Mode(dir_ + "/a"), 0755u);  // one that exists is left as it is
}

TEST_F(PrivatePathTest, MakeDirsSaysWhenAFileIsInTheWay) {
  std::ofstream(dir_ + "/file") << "x";
  Status s = MakeDirs(dir_ + "/file/sub", 0700);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("file"), std::string::npos) << s.message();
}

TEST_F(PrivatePathTest, CreateFileIfAbsentCreatesOnceWithTheMode) {
  std::string path = dir_ + "/runs.db";
  bool created = false;
  ASSERT_TRUE(CreateFileIfAbsent(path, 0600, &created).ok());
  EXPECT_TRUE(created);
  EXPECT_EQ(Mode(path), 0600u);
  std::ofstream(path) << "kept";
  ASSERT_TRUE(CreateFileIfAbsent(path, 0600, &created).ok());
  EXPECT_FALSE(created);
  EXPECT_EQ(std::filesystem::file_size(path), 4u);
}

TEST_F(PrivatePathTest, CreateFileIfAbsentNeverWritesThroughALink) {
  std::string target = dir_ + "/target";
  std::string link = dir_ + "/link";
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  bool created = true;
  EXPECT_TRUE(CreateFileIfAbsent(link, 0600, &created).ok());  // something is there
  EXPECT_FALSE(created);
  EXPECT_FALSE(std::filesystem::exists(target));
}

TEST_F(PrivatePathTest, NarrowModeTakesAwayBitsOfTheUsersOwnFiles) {
  std::string path = dir_ + "/runs.db";
  std::ofstream(path) << "x";
  ::chmod(path.c_str(), 0644);
  ASSERT_TRUE(NarrowMode(path, 0600).ok());
  EXPECT_EQ(Mode(path), 0600u);
  ::chmod(path.c_str(), 0400);
  ASSERT_TRUE(NarrowMode(path, 0600).ok());
  EXPECT_EQ(Mode(path), 0400u);  // never adds a bit
  ::chmod(dir_.c_str(), 0755);
  ASSERT_TRUE(NarrowMode(dir_, 0700).ok());
  EXPECT_EQ(Mode(dir_), 0700u);
}

TEST_F(PrivatePathTest, NarrowModeLeavesLinksAndAbsentPathsAlone) {
  std::string target = dir_ + "/target";
  std::ofstream(target) << "x";
  ::chmod(target.c_str(), 0644);
  std::string link = dir_ + "/link";
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  EXPECT_TRUE(NarrowMode(link, 0600).ok());
  EXPECT_EQ(Mode(target), 0644u);
  EXPECT_TRUE(NarrowMode(dir_ + "/absent", 0600).ok());
}

// Another user's file keeps its mode (as root: a file given to nobody).
TEST_F(PrivatePathTest, NarrowModeLeavesAnotherUsersFileAlone) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file away";
  std::string path = dir_ + "/theirs";
  std::ofstream(path) << "x";
  ::chmod(path.c_str(), 0644);
  ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0);
  EXPECT_TRUE(NarrowMode(path, 0600).ok());
  EXPECT_EQ(Mode(path), 0644u);
}

}  // namespace
}  // namespace tv::private_path_test
