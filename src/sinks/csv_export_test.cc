#include "sinks/csv_export.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/config.h"

namespace tv::csv_export_test {
namespace {

TEST(FlattenJson, ScopesGpusAndCoreArrays) {
  auto row = nlohmann::ordered_json::parse(
      R"({"t":1.5,"elapsed_s":1,"host":{"cpu_util_ratio":0.25,"core_util_ratio":[0.5,0]},)"
      R"("job":{"memory_bytes":10,"memory_bytes_max":12},)"
      R"("gpus":[{"index":3,"util_ratio":0.75,"name":null}]})");
  FlatRow expected = {{"t", "1.5"},
                      {"elapsed_s", "1"},
                      {"host.cpu_util_ratio", "0.25"},
                      {"host.core_util_ratio.0", "0.5"},
                      {"host.core_util_ratio.1", "0"},
                      {"job.memory_bytes", "10"},
                      {"job.memory_bytes_max", "12"},
                      {"gpu3.index", "3"},
                      {"gpu3.util_ratio", "0.75"},
                      {"gpu3.name", ""}};
  EXPECT_EQ(FlattenJson(row), expected);
}

TEST(CsvField, QuotesOnlyWhenNeeded) {
  EXPECT_EQ(CsvField("0.5"), "0.5");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
}

TEST(CsvField, ForeignTextIsVisibleAndNeverAFormula) {
  EXPECT_EQ(CsvField("=1+1"), "'=1+1");
  EXPECT_EQ(CsvField("-0.5"), "-0.5");
  EXPECT_EQ(CsvField("a\nb\x1b[31m"),
            "a\xE2\x90\x8A"
            "b\xE2\x90\x9B[31m");
}

class ExportCsvTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& text) {
    path_ = (std::filesystem::temp_directory_path() /
             ("tv_csv_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".jsonl"))
                .string();
    std::ofstream(path_) << text;
    return path_;
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::string path_;
};

TEST_F(ExportCsvTest, UnionOfKeysInFirstSeenOrderAbsentIsEmpty) {
  std::string path = Write("{\"t\":1,\"job\":{\"a\":1}}\n{\"t\":2,\"job\":{\"b\":2}}\n");
  std::ostringstream out;
  ExportCsv(path, out);
  EXPECT_EQ(out.str(), "t,job.a,job.b\n1,1,\n2,,2\n");
}

TEST_F(ExportCsvTest, GarbledLineNamesFileAndLine) {
  std::string path = Write("{\"t\":1}\nnot json\n{\"t\":3}\n");
  std::ostringstream out;
  try {
    ExportCsv(path, out);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), path + ":2: not a JSON object");
  }
}

TEST_F(ExportCsvTest, HostileProcessNameIsVisibleAndNeutralised) {
  std::string path = Write(
      "{\"t\":1,\"x\":-0.5,\"gpus\":[{\"index\":0,\"processes\":"
      "[{\"pid\":7,\"name\":\"=cmd|'/C calc'!A0\\u001b[2J\\n\\u0007\"}]}]}\n");
  std::ostringstream out;
  ExportCsv(path, out);
  EXPECT_EQ(out.str(),
            "t,x,gpu0.index,gpu0.processes.0.pid,gpu0.processes.0.name\n"
            "1,-0.5,0,7,'=cmd|'/C calc'!A0\xE2\x90\x9B[2J\xE2\x90\x8A\xE2\x90\x87\n");
}

TEST_F(ExportCsvTest, CutLastLineIsSkipped) {
  std::string path = Write("{\"t\":1}\n{\"t\":2,\"jo");
  std::ostringstream out;
  ExportCsv(path, out);
  EXPECT_EQ(out.str(), "t\n1\n");
}

// Found with the samples_jsonl fuzz target: a deeply nested line overflowed the
// stack (Flatten recursed once per level, copying a longer prefix each time).
TEST_F(ExportCsvTest, DeeplyNestedLineNamesFileAndLine) {
  constexpr int kDepth = 200000;
  std::string path =
      Write("{\"t\":1}\n{\"a\":" + std::string(kDepth, '[') + std::string(kDepth, ']') + "}\n");
  std::ostringstream out;
  try {
    ExportCsv(path, out);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), path + ":2: nested deeper than 16 levels");
  }
}

TEST(ExportCsv, MissingFileIsNamed) {
  std::ostringstream out;
  EXPECT_THROW(ExportCsv("/nonexistent/samples.jsonl", out), ConfigError);
}

}  // namespace
}  // namespace tv::csv_export_test
