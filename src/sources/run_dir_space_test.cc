#include "sources/run_dir_space.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace tv::run_dir_space_test {
namespace {

// A file system whose free space the test sets; counts the readings.
struct FakeFs {
  Status status = Status::Ok();
  FsSpace space{.free_bytes = 40e9, .size_bytes = 100e9};
  int calls = 0;
  std::string path;
  StatFs fn() {
    return [this](const char* p, FsSpace* out) {
      ++calls;
      path = p;
      if (status.ok()) *out = space;
      return status;
    };
  }
};

Sample ReadAt(RunDirSpaceSource* source, double mono_s, bool row_tick,
              std::vector<Notice>* notices) {
  Sample s;
  source->Read({.mono_s = mono_s, .row_tick = row_tick}, &s, notices);
  return s;
}

TEST(RunDirSpaceSource, ReadsTheRunDirectorysFileSystem) {
  FakeFs fs;
  RunDirSpaceSource source("/runs/a", fs.fn());
  std::vector<Notice> notices;
  Sample s = ReadAt(&source, 0.1, false, &notices);
  EXPECT_EQ(fs.path, "/runs/a");
  EXPECT_EQ(s.host.run_dir_free_bytes, 40e9) << "the first tick reads at once";
  EXPECT_EQ(s.host.run_dir_size_bytes, 100e9);
  EXPECT_TRUE(notices.empty());
}

TEST(RunDirSpaceSource, ReadsOnRowTicksAndCarriesTheReadingBetween) {
  FakeFs fs;
  RunDirSpaceSource source("/runs/a", fs.fn());
  std::vector<Notice> notices;
  ReadAt(&source, 0.1, false, &notices);
  fs.space.free_bytes = 30e9;
  Sample between = ReadAt(&source, 0.2, false, &notices);
  EXPECT_EQ(fs.calls, 1);
  EXPECT_EQ(between.host.run_dir_free_bytes, 40e9) << "the last reading, until the row tick";
  Sample row = ReadAt(&source, 1.0, true, &notices);
  EXPECT_EQ(fs.calls, 2);
  EXPECT_EQ(row.host.run_dir_free_bytes, 30e9);
}

TEST(RunDirSpaceSource, AVanishedDirectoryLeavesBothAbsentNotZeroAndIsSaidOnce) {
  FakeFs fs;
  RunDirSpaceSource source("/runs/a", fs.fn());
  std::vector<Notice> notices;
  ReadAt(&source, 0.1, true, &notices);
  fs.status = Status::NotFound("/runs/a: No such file or directory");
  Sample gone = ReadAt(&source, 1.0, true, &notices);
  EXPECT_FALSE(gone.host.run_dir_free_bytes);
  EXPECT_FALSE(gone.host.run_dir_size_bytes);
  Sample between = ReadAt(&source, 1.1, false, &notices);
  EXPECT_FALSE(between.host.run_dir_free_bytes) << "no stale reading carried";
  ReadAt(&source, 2.0, true, &notices);
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0].source, "run_dir_space");
  EXPECT_NE(notices[0].message.find("No such file"), std::string::npos) << notices[0].message;

  fs.status = Status::Ok();  // back (remounted)
  Sample back = ReadAt(&source, 3.0, true, &notices);
  EXPECT_EQ(back.host.run_dir_free_bytes, 40e9);
}

TEST(RunDirSpaceSource, AFileSystemOfNoSizeSaysNothing) {
  FakeFs fs;
  fs.space = {.free_bytes = 0, .size_bytes = 0};
  RunDirSpaceSource source("/proc/self", fs.fn());
  std::vector<Notice> notices;
  Sample s = ReadAt(&source, 1.0, true, &notices);
  EXPECT_FALSE(s.host.run_dir_free_bytes);
  EXPECT_FALSE(s.host.run_dir_size_bytes);
  EXPECT_EQ(notices.size(), 1u);
}

TEST(PosixStatFs, ReadsARealDirectoryAndFailsOnAVanishedOne) {
  char dir[] = "/tmp/tv-statfs-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  FsSpace space;
  Status s = PosixStatFs(dir, &space);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_GT(space.size_bytes, 0);
  EXPECT_GE(space.free_bytes, 0);
  EXPECT_LE(space.free_bytes, space.size_bytes);
  ASSERT_EQ(::rmdir(dir), 0);
  s = PosixStatFs(dir, &space);
  EXPECT_EQ(s.code(), Status::Code::kNotFound) << s.message();
}

}  // namespace
}  // namespace tv::run_dir_space_test
