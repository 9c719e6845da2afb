#include "analysis/findings/joined.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace tv::joined_test {
namespace {

namespace fs = std::filesystem;
constexpr double kStart = 1.7e9;

struct RankSpec {
  int rank = 0;
  double wait = 0.02;  // its data-wait share
};

struct NodeSpec {
  std::string host;
  std::string job = "j42";
  double clock_s = 0;       // how far its clock is ahead of the true time
  double steps_per_s = 10;  // every rank's
  std::vector<RankSpec> ranks;
  std::vector<double> gpu_busy;  // one GPU each, held by the job
};

// A node's run directory: 240 rows a second apart, its ranks stepping
// together, as `run` writes them (samples.jsonl, meta.json, events.jsonl).
std::string WriteNode(const std::string& name, const NodeSpec& n) {
  fs::path dir = fs::path(::testing::TempDir()) / "joined" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "meta.json")
      << fmt::format(R"({{"interval_s": 1, "host": "{}", "job": {{"id": "{}", "kind": "given"}}}})",
                     n.host, n.job);
  std::ofstream samples(dir / "samples.jsonl");
  for (int s = 0; s < 240; ++s) {
    double steps = s * n.steps_per_s;
    std::string ranks, gpus;
    for (const RankSpec& r : n.ranks) {
      ranks += fmt::format(R"({}{{"rank":{},"pid":{},"steps":{},"data_wait_ratio":{}}})",
                           ranks.empty() ? "" : ",", r.rank, 100 + r.rank, steps, r.wait);
    }
    for (size_t g = 0; g < n.gpu_busy.size(); ++g) {
      gpus += fmt::format(R"({}{{"index":{},"util_ratio":{},"job_memory_bytes":1e9}})",
                          gpus.empty() ? "" : ",", g, n.gpu_busy[g]);
    }
    samples << fmt::format(
        R"({{"t":{},"elapsed_s":{},"job":{{"processes":{}}},"training":{{"steps":{})"
        R"({}}}{}}})"
        "\n",
        kStart + s + n.clock_s, s, n.ranks.size(), steps,
        n.ranks.size() > 1 ? fmt::format(R"(,"ranks":[{}])", ranks)
                           : fmt::format(R"(,"data_wait_ratio":{})", n.ranks[0].wait),
        gpus.empty() ? "" : fmt::format(R"(,"gpus":[{}])", gpus));
  }
  std::string events;
  for (const RankSpec& r : n.ranks) {
    events += fmt::format(R"({{"t":{},"type":"client_start","pid":{},"rank":{}}})"
                          "\n",
                          kStart + n.clock_s, 100 + r.rank, r.rank);
  }
  events += fmt::format(R"({{"t":{},"type":"end","exit_code":0}})"
                        "\n",
                        kStart + 240 + n.clock_s);
  std::ofstream(dir / "events.jsonl") << events;
  return dir.string();
}

std::vector<const FindingRecord*> WithId(const JoinedVerdict& v, std::string_view id) {
  std::vector<const FindingRecord*> out;
  for (const FindingRecord& f : v.findings) {
    if (f.id == id) out.push_back(&f);
  }
  return out;
}

TEST(JoinedReplay, NamesTheRankOfAnotherNodeThatHoldsTheJobBack) {
  std::string a = WriteNode("slow-a", {.host = "a", .ranks = {{0}, {1}}});
  std::string b = WriteNode("slow-b", {.host = "b", .ranks = {{2}, {3, 0.6}}});
  JoinedVerdict v = JoinedReplay({a, b}, Thresholds());
  EXPECT_EQ(v.job, "j42");
  ASSERT_EQ(v.nodes.size(), 2u);
  EXPECT_EQ(v.nodes[1].node, "b");
  std::vector<const FindingRecord*> stragglers = WithId(v, "straggler");
  ASSERT_EQ(stragglers.size(), 1u);
  EXPECT_EQ(stragglers[0]->subject.rank, 3);
  EXPECT_EQ(stragglers[0]->subject.node, "b");
  EXPECT_DOUBLE_EQ(*stragglers[0]->evidence.Find("data_wait_ratio")->number(), 0.6);
  EXPECT_NE(stragglers[0]->message.find("Rank 3 on b waited 60%"), std::string::npos)
      << stragglers[0]->message;
  EXPECT_EQ(SubjectWords(stragglers[0]->subject), "rank 3 on b");

  std::string c = WriteNode("even-a", {.host = "a", .ranks = {{0}, {1}}});
  std::string d = WriteNode("even-b", {.host = "b", .ranks = {{2}, {3}}});
  EXPECT_TRUE(WithId(JoinedReplay({c, d}, Thresholds()), "straggler").empty());
}

TEST(JoinedReplay, OneNodeIsJudgedAsItsOwnRunIs) {
  std::string a = WriteNode("alone", {.host = "a", .ranks = {{0}, {1, 0.6}}});
  JoinedVerdict v = JoinedReplay({a}, Thresholds());
  std::vector<const FindingRecord*> stragglers = WithId(v, "straggler");
  ASSERT_EQ(stragglers.size(), 1u);
  EXPECT_EQ(stragglers[0]->subject.node, "a");
  EXPECT_EQ(stragglers[0]->message.rfind("Rank 1 waited", 0), 0u) << stragglers[0]->message;
  EXPECT_TRUE(v.notes.empty());
}

TEST(JoinedReplay, OneRankPerNodeIsKnownByItsClient) {
  std::string a = WriteNode("one-a", {.host = "a", .ranks = {{0}}});
  std::string b = WriteNode("one-b", {.host = "b", .ranks = {{1, 0.55}}});
  JoinedVerdict v = JoinedReplay({a, b}, Thresholds());
  std::vector<const FindingRecord*> s = WithId(v, "straggler");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0]->subject.rank, 1);
  EXPECT_EQ(s[0]->subject.node, "b");
}

TEST(JoinedReplay, LinesUpAClockThatIsOffByTheStepsBothReached) {
  std::string a = WriteNode("clock-a", {.host = "a", .ranks = {{0}, {1}}});
  std::string b = WriteNode("clock-b", {.host = "b", .clock_s = 7, .ranks = {{2}, {3, 0.6}}});
  JoinedVerdict v = JoinedReplay({a, b}, Thresholds());
  EXPECT_NEAR(v.nodes[1].clock_offset_s, -7, 0.05);
  ASSERT_EQ(v.notes.size(), 1u);
  EXPECT_NE(v.notes[0].find("b's times moved by -7.00 s"), std::string::npos) << v.notes[0];
  ASSERT_EQ(WithId(v, "straggler").size(), 1u);

  // Within a row: left alone.
  std::string c = WriteNode("near-b", {.host = "b", .clock_s = 0.4, .ranks = {{2}, {3}}});
  JoinedVerdict near = JoinedReplay({a, c}, Thresholds());
  EXPECT_EQ(near.nodes[1].clock_offset_s, 0);
  EXPECT_NE(near.notes[0].find("within a row"), std::string::npos) << near.notes[0];

  // Not in step: the wall clocks, said so.
  std::string d =
      WriteNode("apart-b", {.host = "b", .clock_s = 7, .steps_per_s = 4, .ranks = {{2}, {3}}});
  JoinedVerdict apart = JoinedReplay({a, d}, Thresholds());
  EXPECT_EQ(apart.nodes[1].clock_offset_s, 0);
  EXPECT_NE(apart.notes[0].find("not in step"), std::string::npos) << apart.notes[0];
}

TEST(JoinedReplay, UnevenGpusAcrossNodesNameTheNode) {
  std::string a = WriteNode("gpu-a", {.host = "a", .ranks = {{0}}, .gpu_busy = {0.9}});
  std::string b = WriteNode("gpu-b", {.host = "b", .ranks = {{1}}, .gpu_busy = {0.3}});
  JoinedVerdict v = JoinedReplay({a, b}, Thresholds());
  std::vector<const FindingRecord*> uneven = WithId(v, "gpu-imbalance");
  ASSERT_EQ(uneven.size(), 1u);
  EXPECT_EQ(uneven[0]->subject.kind, FindingSubject::Kind::kGpu);
  EXPECT_EQ(uneven[0]->subject.gpu, 0);
  EXPECT_EQ(uneven[0]->subject.node, "b");
  EXPECT_EQ(uneven[0]->message.rfind("GPU 0 on b was busy 30%", 0), 0u) << uneven[0]->message;

  std::string c = WriteNode("gpu-even-b", {.host = "b", .ranks = {{1}}, .gpu_busy = {0.85}});
  EXPECT_TRUE(WithId(JoinedReplay({a, c}, Thresholds()), "gpu-imbalance").empty());
}

TEST(JoinedReplay, RefusesDirectoriesThatAreNotOneJobsNodes) {
  std::string a = WriteNode("job-a", {.host = "a", .ranks = {{0}, {1}}});
  std::string other = WriteNode("job-b", {.host = "b", .job = "j43", .ranks = {{2}, {3}}});
  EXPECT_THROW(
      {
        try {
          JoinedReplay({a, other}, Thresholds());
        } catch (const std::runtime_error& e) {
          EXPECT_NE(std::string(e.what()).find("is job j42 and"), std::string::npos) << e.what();
          throw;
        }
      },
      std::runtime_error);
  std::string twice = WriteNode("job-twice", {.host = "b", .ranks = {{0}, {1}}});
  EXPECT_THROW(
      {
        try {
          JoinedReplay({a, twice}, Thresholds());
        } catch (const std::runtime_error& e) {
          EXPECT_NE(std::string(e.what()).find("rank 0 is on both a and b"), std::string::npos)
              << e.what();
          throw;
        }
      },
      std::runtime_error);
}

TEST(JoinedReplay, NodesOnOneHostAreToldApartByTheirDirectories) {
  std::string a = WriteNode("same-a", {.host = "h", .ranks = {{0}}});
  std::string b = WriteNode("same-b", {.host = "h", .ranks = {{1}}});
  JoinedVerdict v = JoinedReplay({a, b}, Thresholds());
  EXPECT_EQ(v.nodes[0].node, "h:same-a");
  EXPECT_EQ(v.nodes[1].node, "h:same-b");
}

}  // namespace
}  // namespace tv::joined_test
