#include "analysis/findings/oom.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "analysis/findings/analyzer.h"
#include "analysis/findings/observer.h"
#include "analysis/findings/replay.h"
#include "core/aggregator.h"

namespace tv::oom_test {
namespace {

constexpr double kStart = 1700000000;
constexpr double kMiB = 1 << 20;
constexpr double kLimit = 200 * kMiB;

// A job under a 200 MiB limit whose memory grows by 0.5 MiB a second from
// 20 MiB; one GPU of 80 GB on which it holds 10 GB.
Frame Growing(double s) {
  Frame f;
  f.t = kStart + s;
  f.elapsed_s = s;
  f.job_processes = 1;
  f.job_memory_bytes = 20 * kMiB + 0.5 * kMiB * s;
  f.host_memory_limit_bytes = kLimit;
  f.host_cgroup_memory_current_bytes = *f.job_memory_bytes + 2 * kMiB;
  f.host_memory_available_bytes = 20e9;
  GpuFrame g;
  g.index = 0;
  g.busy = 0.9;
  g.memory_used_bytes = 11e9;
  g.memory_total_bytes = 80e9;
  g.job_memory_bytes = 10e9;
  f.gpus.push_back(g);
  return f;
}

struct OomRun {
  Analyzer analyzer{Thresholds(), 1};
  std::vector<Event> events;
  // Rows for seconds [0, seconds), then one row after the job is gone.
  void Rows(int seconds, double scale = 1) {
    for (int s = 0; s < seconds; ++s) {
      Frame f = Growing(s);
      *f.job_memory_bytes *= scale;
      *f.host_cgroup_memory_current_bytes *= scale;
      analyzer.OnFrame(f, &events);
    }
    Frame gone = Growing(seconds);
    gone.job_processes = 0;
    gone.job_memory_bytes.reset();
    gone.host_cgroup_memory_current_bytes = 1 * kMiB;
    gone.gpus[0].job_memory_bytes = 0;
    analyzer.OnFrame(gone, &events);
  }
  void End(const JobEnd& end, int seconds) {
    analyzer.OnJobEnd(end);
    analyzer.Finish(kStart + seconds + 0.3, &events);
  }
  const Event* First(const std::string& type) const {
    for (const Event& e : events) {
      if (EventTypeName(e.type) == type) return &e;
    }
    return nullptr;
  }
  const Event* OomOpened() const {
    for (const Event& e : events) {
      if (e.type == EventType::kFindingOpen && e.fields["id"] == "oom") return &e;
    }
    return nullptr;
  }
};

// The `oom` entry of a findings list; null when there is none.
nlohmann::ordered_json OomOf(const nlohmann::ordered_json& findings) {
  for (const auto& f : findings) {
    if (f["id"] == "oom") return f;
  }
  return nullptr;
}

Mark ClientEnd(double s, std::string exception, std::string message) {
  Mark m;
  m.type = EventType::kClientEnd;
  m.t = kStart + s;
  m.pid = 4242;
  m.exception = std::move(exception);
  m.message = std::move(message);
  return m;
}

TEST(OomRule, TheKernelsOomKillInTheJobsCgroupIsOomWithTheLastMinutesOfMemory) {
  OomRun run;
  run.Rows(360);  // 20 MiB + 0.5 MiB/s: 199.5 MiB at the last row
  run.End({SIGKILL, 1, "/sys/fs/cgroup/memory/trainvitals-test-1"}, 360);
  const Event* oom = run.First("oom");
  ASSERT_NE(oom, nullptr);
  EXPECT_EQ(oom->fields["killed_by"], "oom_kill");
  EXPECT_EQ(oom->fields["oom_kills"], 1);
  EXPECT_EQ(oom->fields["cgroup"], "/sys/fs/cgroup/memory/trainvitals-test-1");
  EXPECT_EQ(oom->fields["memory_limit_bytes"], kLimit);
  const Event* open = run.OomOpened();
  ASSERT_NE(open, nullptr);
  EXPECT_EQ(open->fields["severity"], "critical");
  EXPECT_EQ(open->t, kStart + 360);  // the last row, as a replay sees it
  const auto& memory = open->fields["evidence"]["memory"];
  ASSERT_EQ(memory.size(), MemoryTrail::kPoints);
  EXPECT_GT(memory.front()["t"].get<double>(), kStart + 360 - MemoryTrail::kTrail_s);
  EXPECT_EQ(memory.back()["t"], kStart + 360);  // the newest point: the job gone
  double s28 = memory[28]["t"].get<double>() - kStart;
  EXPECT_EQ(memory[28]["job_memory_bytes"].get<double>() / kMiB, 20 + 0.5 * s28);
  EXPECT_EQ(memory[28]["memory_limit_bytes"], kLimit);
  EXPECT_FALSE(memory.back().contains("job_memory_bytes"));
  EXPECT_EQ(memory[28]["gpus"][0]["memory_total_bytes"], 80e9);
  EXPECT_EQ(memory[28]["gpus"][0]["job_memory_bytes"], 10e9);
  EXPECT_EQ(open->fields["evidence"]["window_s"], 300);
  nlohmann::ordered_json found = OomOf(FindingsJson(run.analyzer.Findings()));
  ASSERT_TRUE(found.is_object());
  EXPECT_EQ(found["severity"], "critical");
  EXPECT_EQ(found["subject"], nlohmann::ordered_json::object());
  EXPECT_EQ(found["evidence"]["memory"], open->fields["evidence"]["memory"]);
  EXPECT_NE(found["message"].get<std::string>().find("OOM killer"), std::string::npos);
  // The run died of it: the whole run pays a critical finding's points.
  EXPECT_LE(run.analyzer.Health().score.value_or(100), 50);
}

TEST(OomRule, SigkillAtTheMemoryLimitIsOom) {
  OomRun run;
  run.Rows(360);
  run.End({SIGKILL, 0, ""}, 360);
  const Event* open = run.OomOpened();
  ASSERT_NE(open, nullptr);
  EXPECT_EQ(open->fields["evidence"]["killed_by"], "sigkill_at_limit");
  EXPECT_GE(open->fields["evidence"]["limit_ratio"].get<double>(), 0.99);  // its cgroup charge
  EXPECT_NE(open->fields["message"].get<std::string>().find("SIGKILL"), std::string::npos);
}

TEST(OomRule, SigkillWhenTheHostHadNothingLeftIsOom) {
  OomRun run;
  for (int s = 0; s < 60; ++s) {
    Frame f = Growing(s);
    f.host_memory_limit_bytes = 24e9;  // no cgroup limit: MemTotal
    f.host_memory_available_bytes = s < 55 ? 8e9 : 0.5e9;
    run.analyzer.OnFrame(f, &run.events);
  }
  run.End({SIGKILL, 0, ""}, 60);
  ASSERT_NE(run.OomOpened(), nullptr);
}

TEST(OomRule, SigkillFarBelowTheLimitIsNoOom) {
  OomRun run;
  run.Rows(360, 0.5);  // at most half the limit
  run.End({SIGKILL, 0, ""}, 360);
  EXPECT_EQ(run.OomOpened(), nullptr);
  EXPECT_EQ(run.First("oom"), nullptr);
}

TEST(OomRule, SigkillAtTheLimitLongBeforeTheEndIsNoOom) {
  OomRun run;
  for (int s = 0; s < 100; ++s) {
    Frame f = Growing(s);
    if (s > 50) *f.job_memory_bytes = 40 * kMiB, *f.host_cgroup_memory_current_bytes = 41 * kMiB;
    if (s == 40) *f.job_memory_bytes = 199 * kMiB;  // a peak the job survived
    run.analyzer.OnFrame(f, &run.events);
  }
  run.End({SIGKILL, 0, ""}, 100);
  EXPECT_EQ(run.OomOpened(), nullptr);
}

TEST(OomRule, ANormalExitAtTheLimitIsNoOom) {
  OomRun run;
  run.Rows(360);
  run.End({std::nullopt, 0, ""}, 360);
  EXPECT_EQ(run.OomOpened(), nullptr);
  OomRun term;
  term.Rows(360);
  term.End({SIGTERM, 0, ""}, 360);
  EXPECT_EQ(term.OomOpened(), nullptr);
}

TEST(OomRule, TheFrameworksOutOfMemoryErrorIsOomForThatProcess) {
  OomRun run;
  for (int s = 0; s < 20; ++s) run.analyzer.OnFrame(Growing(s), &run.events);
  Mark m = ClientEnd(19.5, "OutOfMemoryError",
                     "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total)");
  m.rank = 3;
  run.analyzer.OnMark(m, &run.events);
  const Event* open = run.OomOpened();
  ASSERT_NE(open, nullptr);
  EXPECT_EQ(open->t, kStart + 19.5);
  EXPECT_EQ(open->fields["subject"], (nlohmann::ordered_json{{"rank", 3}, {"pid", 4242}}));
  EXPECT_EQ(open->fields["evidence"]["killed_by"], "exception");
  EXPECT_EQ(open->fields["evidence"]["exception"], "OutOfMemoryError");
  EXPECT_EQ(open->fields["evidence"]["memory"].size(), 20u);
  EXPECT_NE(open->fields["message"].get<std::string>().find("OutOfMemoryError"), std::string::npos);
  // The command then fails: still one oom finding, the first cause.
  run.End({SIGKILL, 1, "/sys/fs/cgroup/memory/j"}, 20);
  int ooms = 0;
  for (const auto& f : FindingsJson(run.analyzer.Findings())) ooms += f["id"] == "oom" ? 1 : 0;
  EXPECT_EQ(ooms, 1);
  EXPECT_EQ(OomOf(FindingsJson(run.analyzer.Findings()))["evidence"]["killed_by"], "exception");
}

TEST(OomRule, ANonMemoryExceptionIsNoOom) {
  OomRun run;
  for (int s = 0; s < 20; ++s) run.analyzer.OnFrame(Growing(s), &run.events);
  run.analyzer.OnMark(ClientEnd(19.5, "ValueError", "shapes (3,4) and (5,) not aligned"),
                      &run.events);
  run.analyzer.OnMark(ClientEnd(19.6, "", ""), &run.events);  // gone without a word
  run.End({std::nullopt, 0, ""}, 20);
  EXPECT_EQ(run.OomOpened(), nullptr);
  EXPECT_TRUE(OomOf(FindingsJson(run.analyzer.Findings())).is_null());
}

TEST(OomRule, KnowsEachFrameworksOutOfMemoryError) {
  EXPECT_TRUE(IsOutOfMemoryError("OutOfMemoryError", "CUDA out of memory."));
  EXPECT_TRUE(IsOutOfMemoryError("torch.OutOfMemoryError", ""));
  EXPECT_TRUE(IsOutOfMemoryError("ResourceExhaustedError", "OOM when allocating tensor"));
  EXPECT_TRUE(
      IsOutOfMemoryError("tensorflow.python.framework.errors_impl.ResourceExhaustedError", ""));
  EXPECT_TRUE(IsOutOfMemoryError("MemoryError", ""));  // Python's, and Paddle's
  EXPECT_TRUE(IsOutOfMemoryError("RuntimeError", "CUDA error: out of memory"));
  EXPECT_TRUE(IsOutOfMemoryError("RuntimeError", "ResourceExhaustedError: Out of memory error"));
  EXPECT_FALSE(IsOutOfMemoryError("ValueError", "bad shape"));
  EXPECT_FALSE(IsOutOfMemoryError("KeyboardInterrupt", ""));
  EXPECT_FALSE(IsOutOfMemoryError("NotOutOfMemoryErrors", "memory"));
}

TEST(OomRule, TrailKeepsAtMostItsPointsEvenlyOverTheLastMinutes) {
  MemoryTrail trail;
  for (int s = 0; s < 1000; ++s) trail.Add(Growing(s));
  nlohmann::ordered_json p = trail.Points();
  ASSERT_EQ(p.size(), MemoryTrail::kPoints);
  EXPECT_EQ(p.front()["t"], kStart + 700);
  EXPECT_EQ(p.back()["t"], kStart + 999);
  for (size_t i = 1; i < p.size(); ++i) {
    double step = p[i]["t"].get<double>() - p[i - 1]["t"].get<double>();
    EXPECT_GE(step, 10);
    EXPECT_LE(step, 11);
  }
  // A peak between two of those points, and the newest just before it, take
  // the place of the point nearest them: the evidence shows the peak.
  for (int peak : {955, 997}) {
    MemoryTrail spiky;
    double peak_bytes = 0;
    for (int s = 0; s < 1000; ++s) {
      Frame f = Growing(s);
      if (s == peak) f.job_memory_bytes = peak_bytes = 900 * kMiB;
      spiky.Add(f);
    }
    nlohmann::ordered_json q = spiky.Points();
    ASSERT_EQ(q.size(), MemoryTrail::kPoints);
    double most = 0;
    for (const auto& point : q) most = std::max(most, point["job_memory_bytes"].get<double>());
    EXPECT_EQ(most, peak_bytes) << peak;
    EXPECT_EQ(q.back()["t"], kStart + 999);
  }
  MemoryTrail few;
  for (int s = 0; s < 3; ++s) few.Add(Growing(s));
  EXPECT_EQ(few.Points().size(), 3u);
  EXPECT_EQ(MemoryTrail().Points().size(), 0u);
}

TEST(OomRule, TrailKeepsItsNewestPointAtATimeTooLargeToSubtractFrom) {
  MemoryTrail trail;
  trail.Add(Growing(0));
  Frame far = Growing(1);
  far.t = 1e300;  // 1e300 - kTrail_s == 1e300
  trail.Add(far);
  trail.Add(far);
  nlohmann::ordered_json p = trail.Points();
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p.front()["t"], 1e300);
}

TEST(OomRule, LiveTheRunEndsAtItsLastRowAsAReplaySeesIt) {
  // The sampler stops a little after its last row (no sample was left for
  // another): the oom finding opens and ends at that row, live as replayed.
  FindingsObserver observer;
  std::vector<Event> events;
  for (int s = 0; s < 30; ++s) {
    Aggregator agg;
    Sample sample;
    sample.job.processes = 1;
    sample.job.memory_bytes = (150 + s) * kMiB;
    sample.host.memory_limit_bytes = kLimit;
    agg.Add(sample);
    Row row = agg.Take(kStart + s, s);
    observer.OnRow(&row, &events);
  }
  observer.set_job_end({SIGKILL, 1, "/sys/fs/cgroup/memory/j"});
  observer.OnFinish(kStart + 29.4, &events);
  nlohmann::ordered_json oom = OomOf(FindingsJson(observer.analyzer().Findings()));
  ASSERT_TRUE(oom.is_object());
  EXPECT_EQ(oom["opened_t"], kStart + 29);
  EXPECT_EQ(oom["duration_s"], 0);
}

// A run directory as the session writes it: rows in samples.jsonl, the end in
// events.jsonl.
std::string WriteRun(const std::string& name, const std::string& end_events) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(::testing::TempDir()) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "meta.json") << R"({"interval_s": 1})";
  std::ofstream samples(dir / "samples.jsonl");
  for (int s = 0; s < 60; ++s) {
    double job = (150 + 0.8 * s) * kMiB;
    samples << fmt::format(
        R"({{"t":{},"elapsed_s":{},"host":{{"memory_limit_bytes":{},"memory_available_bytes":2e10,)"
        R"("cgroup_memory_current_bytes":{}}},"job":{{"processes":1,"memory_bytes":{}}}}})"
        "\n",
        kStart + s, s, kLimit, job + kMiB, job);
  }
  std::ofstream(dir / "events.jsonl")
      << fmt::format(R"({{"t":{},"type":"start","pid":7}})", kStart) << "\n"
      << end_events;
  return dir.string();
}

TEST(OomRule, ReplayReachesTheVerdictFromTheRunDirectory) {
  std::string killed = WriteRun(
      "oom-killed",
      fmt::format(R"({{"t":{0},"type":"oom_kill","count":1,"cgroup":"/sys/fs/cgroup/memory/j"}})"
                  "\n"
                  R"({{"t":{0},"type":"end","exit_code":137,"signal":9}})"
                  "\n",
                  kStart + 60));
  nlohmann::ordered_json oom = OomOf(FindingsJson(Replay(killed, Thresholds()).findings));
  ASSERT_TRUE(oom.is_object());
  EXPECT_EQ(oom["evidence"]["killed_by"], "oom_kill");
  EXPECT_EQ(oom["opened_t"], kStart + 59);

  std::string sigkill =
      WriteRun("oom-sigkill", fmt::format(R"({{"t":{},"type":"end","exit_code":137,"signal":9}})"
                                          "\n",
                                          kStart + 60));
  oom = OomOf(FindingsJson(Replay(sigkill, Thresholds()).findings));
  ASSERT_TRUE(oom.is_object());
  EXPECT_EQ(oom["evidence"]["killed_by"], "sigkill_at_limit");

  std::string fine = WriteRun("oom-none", fmt::format(R"({{"t":{},"type":"end","exit_code":0}})"
                                                      "\n",
                                                      kStart + 60));
  EXPECT_TRUE(OomOf(FindingsJson(Replay(fine, Thresholds()).findings)).is_null());
}

}  // namespace
}  // namespace tv::oom_test
