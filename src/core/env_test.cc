#include "core/env.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace tv::env_test {
namespace {

std::string TempPath(const char* name) { return ::testing::TempDir() + "/" + name; }

TEST(PosixEnv, ReadFileReadsPastOneChunkAndKeepsCapacity) {
  std::string path = TempPath("tv_env_big.txt");
  std::string big(20000, 'x');
  big.back() = 'y';
  std::ofstream(path) << big;
  PosixEnv env;
  std::string buf;
  ASSERT_TRUE(env.ReadFile(path.c_str(), &buf).ok());
  EXPECT_EQ(buf, big);
  size_t capacity = buf.capacity();
  ASSERT_TRUE(env.ReadFile("/proc/self/stat", &buf).ok());
  EXPECT_LT(buf.size(), 1000u);
  EXPECT_EQ(buf.capacity(), capacity);
  EXPECT_EQ(env.ReadFile(TempPath("tv_env_missing").c_str(), &buf).code(), Status::Code::kNotFound);
}

TEST(PosixEnv, RereadableFileSeesEachReadAfresh) {
  std::string path = TempPath("tv_env_reread.txt");
  std::ofstream(path) << "first, longer";
  PosixEnv env;
  std::unique_ptr<RereadableFile> file;
  ASSERT_TRUE(env.OpenRereadable(path.c_str(), &file).ok());
  std::string buf;
  ASSERT_TRUE(file->Read(&buf).ok());
  EXPECT_EQ(buf, "first, longer");
  std::ofstream(path) << "second";  // truncates the same file
  ASSERT_TRUE(file->Read(&buf).ok());
  EXPECT_EQ(buf, "second");
  EXPECT_EQ(env.OpenRereadable(TempPath("tv_env_missing").c_str(), &file).code(),
            Status::Code::kNotFound);
}

TEST(PosixEnv, HeldProcStatFailsWithNotFoundOnceTheProcessIsReaped) {
  pid_t kid = fork();
  ASSERT_GE(kid, 0);
  if (kid == 0) {
    pause();
    _exit(0);
  }
  PosixEnv env;
  std::unique_ptr<RereadableFile> stat;
  std::string path = "/proc/" + std::to_string(kid) + "/stat";
  ASSERT_TRUE(env.OpenRereadable(path.c_str(), &stat).ok());
  std::string buf;
  ASSERT_TRUE(stat->Read(&buf).ok());
  EXPECT_EQ(buf.substr(0, buf.find(' ')), std::to_string(kid));
  kill(kid, SIGKILL);
  waitpid(kid, nullptr, 0);
  EXPECT_EQ(stat->Read(&buf).code(), Status::Code::kNotFound);
}

TEST(MemEnv, RereadableFileFollowsTheMapAndFailsOnceRemoved) {
  MemEnv env;
  env.Set("/proc/7/stat", "a");
  std::unique_ptr<RereadableFile> file;
  ASSERT_TRUE(env.OpenRereadable("/proc/7/stat", &file).ok());
  EXPECT_EQ(env.open_handles(), 1);
  std::string buf;
  ASSERT_TRUE(file->Read(&buf).ok());
  EXPECT_EQ(buf, "a");
  env.Set("/proc/7/stat", "b");
  ASSERT_TRUE(file->Read(&buf).ok());
  EXPECT_EQ(buf, "b");
  env.Remove("/proc/7/stat");
  EXPECT_EQ(file->Read(&buf).code(), Status::Code::kNotFound);
  file.reset();
  EXPECT_EQ(env.open_handles(), 0);
  EXPECT_EQ(env.OpenRereadable("/proc/7/stat", &file).code(), Status::Code::kNotFound);
}

}  // namespace
}  // namespace tv::env_test
