#include "core/run_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace tv::run_file_test {
namespace {

namespace fs = std::filesystem;

class RunFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "tv-run-file-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Path(const char* name) const { return (dir_ / name).string(); }
  std::string Write(const char* name, const std::string& text) const {
    std::ofstream(Path(name), std::ios::binary) << text;
    return Path(name);
  }

  fs::path dir_;
};

long MaxRssBytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss * 1024L;
}

std::vector<std::string> AllLines(JsonlReader* reader) {
  std::vector<std::string> out;
  JsonlReader::Line line;
  while (reader->Next(&line)) {
    out.push_back(std::to_string(line.number) + (line.cut ? "~" : ":") + std::string(line.text));
  }
  return out;
}

TEST_F(RunFileTest, FifoIsRefusedAtOnceNamingPathAndKind) {
  std::string path = Path("samples.jsonl");
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  int fd = -1;
  Status s = OpenRegularFile(path, &fd);  // no writer: a blocking open would hang here
  EXPECT_EQ(s.code(), Status::Code::kInvalid);
  EXPECT_EQ(s.message(), path + " is a FIFO, not a regular file");
  JsonlReader reader;
  EXPECT_FALSE(reader.Open(path).ok());
  nlohmann::json j;
  EXPECT_EQ(ReadJsonDocument(path, &j, "summary.json").message(),
            "summary.json is a FIFO, not a regular file");
}

TEST_F(RunFileTest, DirectoryAndDeviceBehindSymlinkAreRefused) {
  fs::create_directory(dir_ / "samples.jsonl");
  int fd = -1;
  EXPECT_EQ(OpenRegularFile(Path("samples.jsonl"), &fd).message(),
            Path("samples.jsonl") + " is a directory, not a regular file");
  fs::create_symlink("/dev/zero", dir_ / "zero.jsonl");
  JsonlReader reader;
  Status s = reader.Open(Path("zero.jsonl"));
  EXPECT_EQ(s.message(), Path("zero.jsonl") + " is a character device, not a regular file");
  std::string text;
  EXPECT_FALSE(ReadRegularFile(Path("zero.jsonl"), 1024, &text).ok());
}

TEST_F(RunFileTest, AnotherUsersLinkIsFollowedOnlyToAFileOfItsOwner) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a link another owner";
  std::string target = Write("secret", "root's\n");  // root's file
  std::string own = Path("own.jsonl");
  std::string planted = Path("planted.jsonl");
  ASSERT_EQ(::symlink(target.c_str(), own.c_str()), 0);
  ASSERT_EQ(::symlink(target.c_str(), planted.c_str()), 0);
  ASSERT_EQ(::lchown(planted.c_str(), 4242, 4242), 0);  // a neighbour's link
  int fd = -1;
  ASSERT_TRUE(OpenRegularFile(own, &fd).ok());  // the caller's own link
  ::close(fd);
  Status s = OpenRegularFile(planted, &fd);
  EXPECT_EQ(s.code(), Status::Code::kInvalid);
  EXPECT_EQ(s.message(),
            planted + " is a symbolic link of uid 4242 to a file of uid 0: not followed");
  ASSERT_EQ(::chown(target.c_str(), 4242, 4242), 0);  // now the link's owner's file
  ASSERT_TRUE(OpenRegularFile(planted, &fd).ok());
  ::close(fd);
}

TEST_F(RunFileTest, MissingFileIsNotFound) {
  int fd = -1;
  EXPECT_EQ(OpenRegularFile(Path("nope"), &fd).code(), Status::Code::kNotFound);
  nlohmann::ordered_json j;
  EXPECT_EQ(ReadJsonDocument(Path("nope"), &j).code(), Status::Code::kNotFound);
}

TEST_F(RunFileTest, SparseTwoGigabyteFileWithoutNewlineIsOneSkippedLineInBoundedMemory) {
  std::string path = Path("samples.jsonl");
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, off_t{2} << 30), 0);
  ::close(fd);
  long before = MaxRssBytes();
  JsonlReader reader;
  ASSERT_TRUE(reader.Open(path).ok());
  EXPECT_EQ(AllLines(&reader), std::vector<std::string>{});
  EXPECT_TRUE(reader.status().ok());
  EXPECT_EQ(reader.long_lines(), 1u);
  EXPECT_EQ(reader.first_long_line(), 1u);
  EXPECT_LT(MaxRssBytes() - before, 64L << 20);
  EXPECT_EQ(LongLinesNote(reader, "samples.jsonl"),
            "skipped 1 line longer than 4 MiB in samples.jsonl (line 1)");
  std::string text;
  Status s = ReadRegularFile(path, kMaxJsonDocumentBytes, &text);
  EXPECT_EQ(s.message(), path + " is larger than 64 MiB");
  EXPECT_TRUE(text.empty());
}

TEST_F(RunFileTest, LongLinesAreSkippedAndCountedOthersKeepTheirNumbers) {
  std::string big(100, 'x');
  JsonlReader reader(/*max_line_bytes=*/64);
  std::string text = "{\"t\":1}\n" + big + "\n\n{\"t\":4}\n" + big + "\n{\"t\":6}";
  reader.OpenText(text);
  EXPECT_EQ(AllLines(&reader),
            (std::vector<std::string>{"1:{\"t\":1}", "4:{\"t\":4}", "6~{\"t\":6}"}));
  EXPECT_EQ(reader.long_lines(), 2u);
  EXPECT_EQ(reader.first_long_line(), 2u);
  EXPECT_EQ(LongLinesNote(reader, "f"),
            "skipped 2 lines longer than 64 bytes in f (the first: line 2)");
}

TEST_F(RunFileTest, LongLineAcrossManyChunksIsSkippedFromAFile) {
  std::string big(5u << 20, 'x');  // over 4 MiB and over several 1 MiB reads
  std::string path = Write("samples.jsonl", "{\"t\":1}\n" + big + "\n{\"t\":3}\n");
  JsonlReader reader;
  ASSERT_TRUE(reader.Open(path).ok());
  EXPECT_EQ(AllLines(&reader), (std::vector<std::string>{"1:{\"t\":1}", "3:{\"t\":3}"}));
  EXPECT_EQ(reader.long_lines(), 1u);
}

TEST_F(RunFileTest, ManyLinesAcrossChunkBoundariesAreAllRead) {
  std::string text;
  for (int i = 0; i < 200000; ++i) text += "{\"t\":" + std::to_string(i) + "}\n";
  JsonlReader reader(kMaxJsonlLineBytes, /*padding=*/64);
  reader.OpenText(text);
  JsonlReader::Line line;
  size_t n = 0;
  while (reader.Next(&line)) {
    ASSERT_EQ(line.text, "{\"t\":" + std::to_string(n) + "}");
    ++n;
  }
  EXPECT_EQ(n, 200000u);
  EXPECT_EQ(reader.long_lines(), 0u);
}

TEST_F(RunFileTest, DepthScanIgnoresBracketsInStrings) {
  EXPECT_FALSE(JsonNestedDeeperThan("[[1]]", 2));
  EXPECT_TRUE(JsonNestedDeeperThan("[[[1]]]", 2));
  EXPECT_FALSE(JsonNestedDeeperThan(R"({"a": "[[[[\"[[["})", 1));
  EXPECT_TRUE(JsonNestedDeeperThan(R"({"a": "\\", "b": [[1]]})", 2));
}

TEST_F(RunFileTest, DocumentNestedDeepIsRefusedBeforeParsing) {
  std::string deep = "{\"x\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
  std::string path = Write("summary.json", deep);
  nlohmann::json j;
  Status s = ReadJsonDocument(path, &j, "summary.json");
  EXPECT_EQ(s.code(), Status::Code::kInvalid);
  EXPECT_EQ(s.message(), "summary.json is nested deeper than 64 levels");
  std::string why;
  EXPECT_FALSE(ParseJsonLine(deep, &j, &why));
  EXPECT_EQ(why, "nested deeper than 64 levels");
}

TEST_F(RunFileTest, DocumentThatIsNotJsonSaysSo) {
  std::string path = Write("summary.json", "{not json");
  nlohmann::ordered_json j;
  EXPECT_EQ(ReadJsonDocument(path, &j, "summary.json").message(), "summary.json is not JSON");
  path = Write("meta.json", R"({"a": [1, 2]})");
  ASSERT_TRUE(ReadJsonDocument(path, &j).ok());
  EXPECT_EQ(j["a"][1], 2);
}

}  // namespace
}  // namespace tv::run_file_test
