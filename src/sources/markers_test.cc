// The marker source against a real endpoint and real clients in this process.
#include "sources/markers.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "analysis/phases.h"
#include "core/clock.h"
#include "core/metrics.h"
#include "core/sampler.h"
#include "markers/client.h"

namespace tv {
namespace {

struct Fixture {
  Fixture() {
    std::string error;
    endpoint = MarkerEndpoint::Create(1.0, &error);
    EXPECT_TRUE(endpoint) << error;
    source = std::make_unique<MarkerSource>(endpoint.get());
  }
  Sample Read(double mono_s) {
    Sample s;
    source->Read(Tick{mono_s, true}, &s, &notices);
    return s;
  }
  void SendRaw(std::string_view text) {
    int fd = ::socket(AF_UNIX, SOCK_SEQPACKET, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, endpoint->socket_path().c_str(), sizeof(addr.sun_path) - 1);
    ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    ::send(fd, text.data(), text.size(), 0);
    ::close(fd);
  }
  std::unique_ptr<MarkerEndpoint> endpoint;
  std::unique_ptr<MarkerSource> source;
  std::vector<Notice> notices;
};

TEST(MarkerSource, CountsStepsAndFollowsEpochsAndPhases) {
  Fixture f;
  MarkerClient client(f.endpoint->socket_path(), -1, "test");
  ASSERT_TRUE(client.ok()) << client.error();
  EXPECT_EQ(client.slot(), 0);
  Sample s0 = f.Read(1.0);
  ASSERT_EQ(s0.training.markers.size(), 1u);
  EXPECT_EQ(s0.training.markers[0].type, MarkerType::kHello);
  EXPECT_EQ(s0.training.markers[0].framework, "test");

  client.PhaseBegin("train");
  client.EpochBegin(0);
  for (int i = 0; i < 5; ++i) client.Step(i);
  client.Scalars({{"loss", 0.25}});
  Sample s1 = f.Read(2.0);
  EXPECT_EQ(s1.training.steps, 5);
  EXPECT_EQ(s1.training.step, 4);
  EXPECT_EQ(s1.training.epoch, 0);
  EXPECT_EQ(s1.training.phase, "train");
  EXPECT_DOUBLE_EQ(*s1.training.steps_per_second, 5.0);  // 5 steps over the 1 s between reads
  ASSERT_EQ(s1.training.scalars.size(), 1u);
  EXPECT_EQ(s1.training.scalars[0].first, "loss");

  client.PhaseBegin("eval");
  Sample s2 = f.Read(3.0);
  EXPECT_EQ(s2.training.phase, "eval");  // the innermost open phase
  client.PhaseEnd("eval");
  client.EpochEnd(0);
  Sample s3 = f.Read(4.0);
  EXPECT_EQ(s3.training.phase, "train");
  ASSERT_EQ(s3.training.markers.size(), 2u);
  EXPECT_EQ(s3.training.markers[1].steps, 5);  // steps counted since the epoch began
}

TEST(MarkerSource, PhaseChangesFollowTheLowestRanksInnermostPhase) {
  Fixture f;
  MarkerClient rank1(f.endpoint->socket_path(), 1, "ddp");
  MarkerClient rank0(f.endpoint->socket_path(), 0, "ddp");
  rank1.PhaseBegin("train");  // only rank 1 is in a phase: it counts
  rank0.PhaseBegin("train");  // rank 0 joins the same phase: no change
  rank0.PhaseBegin("eval");
  rank1.PhaseBegin("eval");  // rank 1 does not lead
  rank0.PhaseEnd("eval");
  Sample s = f.Read(1.0);
  const auto& c = s.training.phase_changes;
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].phase, "train");
  EXPECT_TRUE(c[0].began);
  EXPECT_EQ(c[1].phase, "eval");
  EXPECT_TRUE(c[1].began);
  EXPECT_EQ(c[2].phase, "train");  // back to the phase eval was nested in
  EXPECT_FALSE(c[2].began);
  EXPECT_EQ(s.training.phase, "train");
}

TEST(MarkerSource, MalformedDatagramsAreCountedAndSaidOnce) {
  Fixture f;
  f.SendRaw("not json");
  f.SendRaw(R"({"v":9,"type":"hello","t":1})");
  Sample s = f.Read(1.0);
  EXPECT_EQ(s.training.markers_malformed, 2);
  EXPECT_EQ(s.training.malformed_error, "not a JSON object");
  f.SendRaw("{}");
  Sample s2 = f.Read(2.0);
  EXPECT_EQ(s2.training.markers_malformed, 3);
  EXPECT_TRUE(s2.training.malformed_error.empty());
}

TEST(MarkerSource, AllocatorFiguresJoinTheirGpuBySummingProcesses) {
  Fixture f;
  MarkerClient a(f.endpoint->socket_path(), 0, "torch");
  MarkerClient b(f.endpoint->socket_path(), 1, "torch");
  a.Allocator(
      {{.device = 0, .allocated_bytes = 100, .peak_allocated_bytes = 150, .reserved_bytes = 200}});
  b.Allocator({{.device = 0, .allocated_bytes = 10, .peak_allocated_bytes = 15},
               {.device = 5, .allocated_bytes = 1}});
  Sample s;
  s.gpus.emplace_back().index = 0;
  f.source->Read(Tick{1.0, true}, &s, &f.notices);
  EXPECT_EQ(s.gpus[0].allocator_allocated_bytes, 110);
  EXPECT_EQ(s.gpus[0].allocator_peak_bytes, 165);
  EXPECT_EQ(s.gpus[0].allocator_reserved_bytes, 200);
  ASSERT_EQ(s.training.ranks.size(), 2u);
  EXPECT_EQ(s.training.ranks[1].rank, 1);
}

TEST(MarkerSource, AllocatorFiguresFindTheirGpuByUuidWhateverTheRankCallsIt) {
  // Each rank has its own CUDA_VISIBLE_DEVICES: both call their GPU device 0.
  Fixture f;
  MarkerClient a(f.endpoint->socket_path(), 0, "torch");
  MarkerClient b(f.endpoint->socket_path(), 1, "torch");
  MarkerClient c(f.endpoint->socket_path(), 2, "torch");
  a.Allocator({{.device = 0, .uuid = "GPU-bbbb-1", .allocated_bytes = 100}});
  b.Allocator({{.device = 0, .uuid = "AAAA-0", .allocated_bytes = 10}});     // bare, other case
  c.Allocator({{.device = 0, .uuid = "GPU-cccc-9", .allocated_bytes = 1}});  // not watched
  Sample s;
  GpuSample& g0 = s.gpus.emplace_back();
  g0.index = 0;
  g0.uuid = "GPU-aaaa-0";
  GpuSample& g1 = s.gpus.emplace_back();
  g1.index = 1;
  g1.uuid = "GPU-bbbb-1";
  f.source->Read(Tick{1.0, true}, &s, &f.notices);
  EXPECT_EQ(s.gpus[0].allocator_allocated_bytes, 10);
  EXPECT_EQ(s.gpus[1].allocator_allocated_bytes, 100);
}

TEST(MarkerSource, ABurstFromManyProcessesIsNotLost) {
  // More messages at once than a datagram socket queues (max_dgram_qlen).
  Fixture f;
  std::vector<std::unique_ptr<MarkerClient>> ranks;
  for (int r = 0; r < 8; ++r) {
    ranks.push_back(std::make_unique<MarkerClient>(f.endpoint->socket_path(), r, "ddp"));
  }
  for (auto& c : ranks) {
    for (int e = 0; e < 20; ++e) {
      EXPECT_TRUE(c->EpochBegin(e));
      EXPECT_TRUE(c->EpochEnd(e));
    }
  }
  Sample s = f.Read(1.0);
  EXPECT_EQ(s.training.markers.size(), 8u * 41);  // hello + 40 each
  EXPECT_FALSE(s.training.markers_malformed);
}

TEST(MarkerSource, MarkersSentAfterTheLastTickCountWhenSamplingStops) {
  std::string error;
  auto endpoint = MarkerEndpoint::Create(1.0, &error);
  ASSERT_TRUE(endpoint) << error;
  FakeClock clock;
  SinkThread sinks({});
  sinks.Start();
  PhaseTracker tracker;
  std::vector<std::unique_ptr<Source>> sources;
  sources.push_back(std::make_unique<MarkerSource>(endpoint.get()));
  Sampler sampler({.sample_hz = 10, .interval_s = 1}, &clock, std::move(sources), &sinks, &tracker);
  sampler.RunTicks(3);
  {
    MarkerClient client(endpoint->socket_path(), -1, "late");
    client.EpochBegin(0);
    client.Step(0);
    client.EpochEnd(0);
  }  // the process is gone before the sampler looks again
  sampler.Stop();
  sinks.Close();
  ASSERT_EQ(tracker.Epochs().size(), 1u);
  EXPECT_EQ(tracker.Epochs()[0]["steps"], 1);
  // The machine is not read again: the last readings are held in one more
  // sample with the final step count.
  EXPECT_EQ(sampler.run_row().samples, 4u);
  size_t steps = 0;
  for (size_t i = 0; i < SampleMetrics().size(); ++i) {
    if (SampleMetrics()[i].scope == Scope::kTraining && SampleMetrics()[i].name == "steps")
      steps = i;
  }
  ASSERT_TRUE(sampler.run_row().values[steps]);
  EXPECT_EQ(sampler.run_row().values[steps]->last, 1);
}

TEST(MarkerClient, WithoutASupervisorItDoesNothingAndSaysWhy) {
  MarkerClient c("/nonexistent/markers.sock", -1, "x");
  EXPECT_FALSE(c.ok());
  EXPECT_NE(c.error().find("/nonexistent/markers.sock"), std::string::npos);
  EXPECT_FALSE(c.Step(1));
  EXPECT_FALSE(c.EpochBegin(0));
}

TEST(MarkerClient, AllocatorFiguresAreDueOncePerInterval) {
  Fixture f;
  MarkerClient c(f.endpoint->socket_path(), -1, "x");
  EXPECT_TRUE(c.Step(0));  // the first step asks at once
  int due = 0;
  for (int i = 1; i < 1000; ++i) due += c.Step(i) ? 1 : 0;
  EXPECT_EQ(due, 0);  // far less than the 1 s interval passed
}

TEST(PhaseTracker, EpochClosesWhenEveryRankEndedIt) {
  PhaseTracker tracker;
  std::vector<Event> events;
  auto marker = [](MarkerType type, int pid, int rank, double t, int64_t epoch, int64_t steps) {
    Marker m;
    m.type = type;
    m.pid = pid;
    m.rank = rank;
    m.t = t;
    m.epoch = epoch;
    m.steps = steps;
    return m;
  };
  Sample s;
  s.job.cpu_cores = 2;
  s.training.markers = {marker(MarkerType::kEpochBegin, 10, 0, 100, 0, 0),
                        marker(MarkerType::kEpochBegin, 11, 1, 100.5, 0, 0)};
  tracker.OnSample(s, &events);
  s.training.markers = {marker(MarkerType::kEpochEnd, 10, 0, 104, 0, 40)};
  tracker.OnSample(s, &events);
  EXPECT_TRUE(events.empty());  // rank 1 is still in epoch 0
  s.training.markers = {marker(MarkerType::kEpochEnd, 11, 1, 105, 0, 40)};
  tracker.OnSample(s, &events);
  ASSERT_EQ(events.size(), 1u);
  const auto& rec = events[0].fields;
  EXPECT_EQ(events[0].type, "epoch");
  EXPECT_EQ(rec["epoch"], 0);
  EXPECT_DOUBLE_EQ(rec["duration_s"].get<double>(), 5.0);
  EXPECT_EQ(rec["steps"], 40);
  EXPECT_DOUBLE_EQ(rec["steps_per_second"].get<double>(), 8.0);
  EXPECT_DOUBLE_EQ(rec["cpu_cores_mean"].get<double>(), 2.0);
  ASSERT_EQ(rec["ranks"].size(), 2u);
  EXPECT_EQ(rec["ranks"][1]["rank"], 1);
  EXPECT_DOUBLE_EQ(rec["ranks"][1]["duration_s"].get<double>(), 4.5);
  EXPECT_EQ(tracker.Epochs().size(), 1u);
}

TEST(PhaseTracker, EpochRecordSaysWhichCallItBelongsTo) {
  PhaseTracker tracker;
  std::vector<Event> events;
  Sample s;
  for (int64_t epoch : {0, 1}) {
    Marker begin;
    begin.type = MarkerType::kEpochBegin;
    begin.t = 100 + static_cast<double>(epoch);
    begin.epoch = epoch;
    if (epoch == 1) begin.call = 4;
    Marker end = begin;
    end.type = MarkerType::kEpochEnd;
    end.call.reset();
    end.t += 0.5;
    s.training.markers = {begin, end};
    tracker.OnSample(s, &events);
  }
  ASSERT_EQ(tracker.Epochs().size(), 2u);
  EXPECT_FALSE(tracker.Epochs()[0].contains("call"));  // a client that did not say
  EXPECT_EQ(tracker.Epochs()[1]["call"], 4);
}

TEST(PhaseTracker, EpochEnergyIntegratesPowerHeldBetweenReadings) {
  PhaseTracker tracker;
  std::vector<Event> events;
  Marker begin;
  begin.type = MarkerType::kEpochBegin;
  begin.pid = 1;
  begin.t = 100;
  begin.epoch = 0;
  Marker end = begin;
  end.type = MarkerType::kEpochEnd;
  end.t = 102;
  end.steps = 10;
  for (int i = 0; i <= 20; ++i) {  // 2 s at 10 Hz
    Sample s;
    s.mono_s = 50 + i * 0.1;
    GpuSample& g = s.gpus.emplace_back();
    g.index = 0;
    g.power_watts = 250;
    if (i % 10 == 0) s.host.cpu_power_watts = 40;  // RAPL: once per row
    if (i == 0) s.training.markers = {begin};
    if (i == 20) s.training.markers = {end};
    tracker.OnSample(s, &events);
  }
  ASSERT_EQ(events.size(), 1u);
  const auto& rec = events[0].fields;
  EXPECT_NEAR(rec["gpus"][0]["energy_joules"].get<double>(), 500, 1);  // 250 W x 2 s
  EXPECT_NEAR(rec["cpu_energy_joules"].get<double>(), 80, 1);          // 40 W held x 2 s
}

TEST(PhaseTracker, NestedEvalTimeCountsAsEvalAndOpenEpochsCloseAtTheEnd) {
  PhaseTracker tracker;
  std::vector<Event> events;
  Sample s;
  Marker begin;
  begin.type = MarkerType::kEpochBegin;
  begin.pid = 1;
  begin.t = 10;
  begin.epoch = 3;
  // Phase changes as the marker source reports them (train, eval nested in it).
  s.training.markers = {begin};
  s.training.phase_changes = {{10, "train", true}};
  tracker.OnSample(s, &events);
  s.training.markers.clear();
  s.training.phase_changes = {{18, "eval", true}};
  tracker.OnSample(s, &events);
  s.training.phase_changes = {{20, "train", false}};
  tracker.OnSample(s, &events);
  s.training.phase_changes.clear();
  tracker.OnFinish(25, &events);
  auto phases = tracker.Phases();
  EXPECT_DOUBLE_EQ(phases["train"]["duration_s"].get<double>(), 13.0);
  EXPECT_DOUBLE_EQ(phases["eval"]["duration_s"].get<double>(), 2.0);
  EXPECT_EQ(phases.begin().key(), "train");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].fields["complete"], false);
  EXPECT_DOUBLE_EQ(events[0].fields["duration_s"].get<double>(), 15.0);
}

}  // namespace
}  // namespace tv
