#include "sources/proc_pid_parse.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace tv::proc_pid_parse_test {
namespace {

using namespace std::string_view_literals;

std::string Fixture(const char* name) {
  std::ifstream in(std::string(TRAINVITALS_FIXTURES_DIR) + "/proc/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// 52 fields as the kernel writes them; utime 14, stime 15, cutime 16, cstime 17,
// threads 20, start 22, rss 24.
constexpr std::string_view kStatTail =
    " S 7 7 7 0 -1 4194560 2088 28247 0 16 150 25 20 5 20 0 3 0 47087 5124096 944 "
    "18446744073709551615 1 2 3 0 0 0 65536 4 1132560123 1 0 0 17 0 0 0 0 0 0 1 2 3 4 5 6 7 0\n";

TEST(ProcStat, ReadsTheFieldsOfARealFile) {
  auto st = ParseProcStat(Fixture("stat_bash.txt"));
  ASSERT_TRUE(st);
  EXPECT_EQ(st->pid, 3107);
  EXPECT_EQ(st->comm, "bash");
  EXPECT_EQ(st->state, 'S');
  EXPECT_EQ(st->ppid, 3088);
  EXPECT_EQ(st->pgrp, 3107);
  EXPECT_EQ(st->session, 3107);
  EXPECT_EQ(st->utime_ticks, 1u);
  EXPECT_EQ(st->stime_ticks, 1u);
  EXPECT_EQ(st->num_threads, 1u);
  EXPECT_EQ(st->starttime_ticks, 47087u);
  EXPECT_EQ(st->rss_pages, 944u);
  EXPECT_EQ(st->start_code, 94482341879808u);
}

TEST(ProcStat, HandlesCommWithSpacesAndParens) {
  std::string text = "42 (a) (b c)" + std::string(kStatTail);
  auto st = ParseProcStat(text);
  ASSERT_TRUE(st);
  EXPECT_EQ(st->pid, 42);
  EXPECT_EQ(st->comm, "a) (b c");
  EXPECT_EQ(st->ppid, 7);
  EXPECT_EQ(st->utime_ticks, 150u);
  EXPECT_EQ(st->stime_ticks, 25u);
  EXPECT_EQ(st->children_ticks, 25u);  // cutime 20 + cstime 5
  EXPECT_EQ(st->num_threads, 3u);
  EXPECT_EQ(st->starttime_ticks, 47087u);
  EXPECT_EQ(st->rss_pages, 944u);
  EXPECT_EQ(st->start_code, 1u);  // as the kernel shows it to a reader it does not trust
}

TEST(ProcStat, AStatEndingAfterRsslimHasNoStartCode) {
  auto st = ParseProcStat("42 (x) S 1 1 1 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 100 1000 9 77\n");
  ASSERT_TRUE(st);
  EXPECT_EQ(st->rss_pages, 9u);
  EXPECT_EQ(st->start_code, 0u);
}

TEST(ProcStat, HandlesCommThatLooksLikeFields) {
  auto st = ParseProcStat("42 (x) S 1 2 3 ) (y)" + std::string(kStatTail));
  ASSERT_TRUE(st);
  EXPECT_EQ(st->comm, "x) S 1 2 3 ) (y");
  EXPECT_EQ(st->ppid, 7);
}

TEST(ProcStat, AcceptsTheLargestCounter) {
  std::string tail(kStatTail);
  tail.replace(tail.find(" 150 "), 5, " 18446744073709551615 ");
  auto st = ParseProcStat("1 (big)" + tail);
  ASSERT_TRUE(st);
  EXPECT_EQ(st->utime_ticks, 18446744073709551615u);
}

TEST(ProcStat, RejectsOverflowingCounter) {
  std::string tail(kStatTail);
  tail.replace(tail.find(" 150 "), 5, " 18446744073709551616 ");
  EXPECT_FALSE(ParseProcStat("1 (big)" + tail));
}

TEST(ProcStat, RejectsTruncatedAndMissingFields) {
  std::string full = "42 (w)" + std::string(kStatTail);
  // Every prefix that cuts rss (field 24) or loses the field after it fails.
  size_t rss_end = full.find(" 944 ") + 6;
  for (size_t n = 0; n < rss_end; ++n) {
    EXPECT_FALSE(ParseProcStat(std::string_view(full).substr(0, n))) << "prefix " << n;
  }
  EXPECT_TRUE(ParseProcStat(std::string_view(full).substr(0, rss_end)));
  EXPECT_FALSE(ParseProcStat(""));
  EXPECT_FALSE(ParseProcStat("42 w S 1 2 3"));
  EXPECT_FALSE(ParseProcStat(")42 ("));
  EXPECT_FALSE(ParseProcStat("x (w)" + std::string(kStatTail)));
  EXPECT_FALSE(ParseProcStat("42 (w) S x" + std::string(kStatTail).substr(4)));
}

TEST(ChildPids, ReadsSpaceSeparatedList) {
  std::vector<int> pids = {1};
  AppendChildPids("4274 4275 \n", &pids);
  EXPECT_EQ(pids, (std::vector<int>{1, 4274, 4275}));
}

TEST(ChildPids, SkipsGarbageAndEmpty) {
  std::vector<int> pids;
  AppendChildPids("", &pids);
  AppendChildPids("   ", &pids);
  AppendChildPids("12 x -3 0 99999999999 13", &pids);
  EXPECT_EQ(pids, (std::vector<int>{12, 13}));
}

TEST(ProcIo, ReadsStorageCounters) {
  ProcIo io = ParseProcIo(Fixture("io.txt"));
  EXPECT_EQ(io.read_bytes, 1720320u);
  EXPECT_EQ(io.write_bytes, 327680u);
}

TEST(ProcIo, MissingAndMalformedAreAbsent) {
  EXPECT_FALSE(ParseProcIo("").read_bytes);
  ProcIo io = ParseProcIo("rchar: 5\nread_bytes: x\nwrite_bytes: 18446744073709551615");
  EXPECT_FALSE(io.read_bytes);
  EXPECT_EQ(io.write_bytes, 18446744073709551615u);
  // cancelled_write_bytes must not be taken for write_bytes.
  EXPECT_FALSE(ParseProcIo("cancelled_write_bytes: 9\n").write_bytes);
}

TEST(SmapsRollup, ReadsPssAndRssInBytes) {
  SmapsRollup r = ParseSmapsRollup(Fixture("smaps_rollup.txt"));
  EXPECT_EQ(r.rss_bytes, 3948u * 1024);
  EXPECT_EQ(r.pss_bytes, 1158u * 1024);
  EXPECT_EQ(r.pss_anon_bytes, 565u * 1024);
}

TEST(SmapsRollup, IgnoresPssVariantsAndOverflow) {
  SmapsRollup r = ParseSmapsRollup("Pss_Anon: 5 kB\nPss_Dirty: 7 kB\nRss: 18446744073709551615 kB");
  EXPECT_FALSE(r.pss_bytes);
  EXPECT_FALSE(r.rss_bytes);
  EXPECT_FALSE(ParseSmapsRollup("").pss_bytes);
  EXPECT_FALSE(ParseSmapsRollup("Pss:").pss_bytes);
  EXPECT_EQ(ParseSmapsRollup("Pss:  12").pss_bytes, 12u * 1024);
}

TEST(SmapsRollup, TheAnonymousPartIsPssAnonAndShmemWhereTheKernelHasThem) {
  SmapsRollup r = ParseSmapsRollup(
      "Rss: 1700 kB\nPss: 415 kB\nPss_Dirty: 112 kB\nPss_Anon: 112 kB\nPss_File: 303 kB\n"
      "Pss_Shmem: 8 kB\nAnonymous: 112 kB\n");
  EXPECT_EQ(r.pss_bytes, 415u * 1024);
  EXPECT_EQ(r.pss_anon_bytes, 120u * 1024);
  EXPECT_EQ(ParseSmapsRollup("Pss: 9 kB\nPss_Anon: 4 kB\n").pss_anon_bytes, 4u * 1024);
  EXPECT_FALSE(ParseSmapsRollup("Rss: 1700 kB\nPss: 415 kB\n").pss_anon_bytes);  // before 5.10
}

TEST(NsPids, ReadsEveryNamespaceLevel) {
  EXPECT_EQ(ParseNsPids(Fixture("status.txt")), std::vector<int>{3107});
  EXPECT_EQ(ParseNsPids("Name:\tpython\nNSpid:\t81234\t17\t1\nNStgid:\t1\n"),
            (std::vector<int>{81234, 17, 1}));
  EXPECT_EQ(ParseNsPids("NSpid:\t5"), std::vector<int>{5});
}

TEST(NsPids, MissingOrMalformedIsEmpty) {
  EXPECT_TRUE(ParseNsPids("").empty());
  EXPECT_TRUE(ParseNsPids("Name:\tx\nPid:\t3\n").empty());
  EXPECT_TRUE(ParseNsPids("NSpid:\t12\tabc\n").empty());
  EXPECT_TRUE(ParseNsPids("XNSpid:\t12\n").empty());
}

TEST(Cmdline, JoinsArgumentsWithSpaces) {
  EXPECT_EQ(FormatCmdline("python\0train.py\0--lr\0001e-3\0"sv), "python train.py --lr 1e-3");
  EXPECT_EQ(FormatCmdline(""), "");
  EXPECT_EQ(FormatCmdline("\0\0"sv), "");
  EXPECT_EQ(FormatCmdline("a\nb"), "a b");
}

TEST(Cmdline, TruncatesLongLines) {
  std::string raw(10000, 'x');
  EXPECT_EQ(FormatCmdline(raw).size(), kMaxCmdlineChars);
  EXPECT_EQ(FormatCmdline("abcdef", 3), "abc");
}

}  // namespace
}  // namespace tv::proc_pid_parse_test
