// The marker source against a real endpoint and real clients in this process.
#include "sources/markers.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "analysis/phases.h"
#include "core/clock.h"
#include "core/metrics.h"
#include "core/sampler.h"
#include "markers/client.h"
#include "sources/markers_fixture.h"

namespace tv::markers_test {
namespace {

struct Fixture : MarkerSourceFixture {
  void SendRaw(std::string_view text) {
    int fd = ::socket(AF_UNIX, SOCK_SEQPACKET, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, endpoint->socket_path().c_str(), sizeof(addr.sun_path) - 1);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(::send(fd, text.data(), text.size(), 0), static_cast<ssize_t>(text.size()));
    ::close(fd);
  }
};

TEST(MarkerSource, CountsStepsAndFollowsEpochsAndPhases) {
  Fixture f;
  MarkerClient client(f.endpoint->socket_path(), -1, "test");
  ASSERT_TRUE(client.ok()) << client.error();
  EXPECT_EQ(client.slot(), 0);
  Sample s0 = f.Read(1.0);
  ASSERT_EQ(s0.training.events.size(), 1u);
  EXPECT_EQ(s0.training.events[0].type, EventType::kClientStart);
  EXPECT_EQ(s0.training.events[0].framework, "test");

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
  ASSERT_EQ(s3.training.events.size(), 2u);
  EXPECT_EQ(s3.training.events[1].steps, 5);  // steps counted since the epoch began
}

TEST(MarkerSource, AnEpochsEndCarriesTheScalarsSaidSinceItBegan) {
  Fixture f;
  MarkerClient client(f.endpoint->socket_path(), -1, "test");
  ASSERT_TRUE(client.ok()) << client.error();
  client.Scalars({{"warmup", 1}});  // before any epoch: in rows only
  client.EpochBegin(0);
  client.Scalars({{"loss", 0.5}});
  client.Scalars({{"loss", 0.25}, {"accuracy", 0.9}});
  client.EpochEnd(0);
  client.EpochBegin(1);
  client.Scalars({{"loss", 0.125}});
  client.Allocator({});  // figures go into rows, no event
  Sample s1 = f.Read(1.0);
  std::vector<TrainingEvent> ends;
  std::vector<EventType> types;
  for (const TrainingEvent& e : s1.training.events) {
    types.push_back(e.type);
    if (e.type == EventType::kEpochEnd) ends.push_back(e);
  }
  // Scalars are no event of their own (nor a profile, nor anything else).
  EXPECT_EQ(types, (std::vector<EventType>{EventType::kClientStart, EventType::kEpochBegin,
                                           EventType::kEpochEnd, EventType::kEpochBegin}));
  ASSERT_EQ(ends.size(), 1u);
  using Scalars = std::vector<std::pair<std::string, double>>;
  EXPECT_EQ(ends[0].scalars, (Scalars{{"loss", 0.25}, {"accuracy", 0.9}}));
  EXPECT_EQ(s1.training.scalars, (Scalars{{"warmup", 1}, {"loss", 0.125}, {"accuracy", 0.9}}));
  client.EpochEnd(1);  // in the next read: only what epoch 1 said
  Sample s2 = f.Read(2.0);
  ASSERT_EQ(s2.training.events.size(), 1u);
  EXPECT_EQ(s2.training.events[0].scalars, (Scalars{{"loss", 0.125}}));
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
  ranks.reserve(8);
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
  EXPECT_EQ(s.training.events.size(), 8u * 41);  // hello + 40 each
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
  Sampler sampler({.sample_hz = 10, .interval_s = 1}, &clock, std::move(sources), &sinks,
                  {&tracker});
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
  EXPECT_EQ(tracker.Epochs()[0].steps, 1);
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

TEST(MarkerSource, MoreShortLivedClientsThanSlotsInSequenceAllCount) {
  Fixture f;
  int ends = 0;
  Sample s;
  for (int i = 0; i < 300; ++i) {
    {
      MarkerClient c(f.endpoint->socket_path(), -1, "short");
      ASSERT_GE(c.slot(), 0) << "client " << i << ": " << c.error();
      for (int k = 0; k <= i; ++k) c.Step(k);
    }  // said goodbye: its slot is free again, its count kept
    s = f.Read(1.0 + i * 0.1);
    for (const TrainingEvent& e : s.training.events) {
      if (e.type == EventType::kClientEnd) ++ends;
    }
  }
  EXPECT_EQ(ends, 300);
  EXPECT_EQ(s.training.steps, 300);  // the last (and longest) client's steps
  EXPECT_EQ(s.training.step, 299);
  EXPECT_TRUE(s.training.ranks.empty());  // no client holds a slot now
}

TEST(MarkerSource, AProcessKilledWithoutGoodbyeFreesItsSlotAndLeavesItsPhase) {
  Fixture f;
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    MarkerClient c(f.endpoint->socket_path(), -1, "doomed");
    c.PhaseBegin("train");
    for (int k = 0; k < 5; ++k) c.Step(k);
    ::_exit(c.slot() == 0 ? 0 : 1);  // no goodbye, as when killed
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  Sample s = f.Read(1.0);
  EXPECT_EQ(s.training.steps, 5);         // its count is kept
  EXPECT_TRUE(s.training.ranks.empty());  // its slot is free
  EXPECT_EQ(s.training.phase, "");
  ASSERT_FALSE(s.training.events.empty());
  EXPECT_EQ(s.training.events.back().type, EventType::kClientEnd);
  EXPECT_EQ(s.training.events.back().pid, child);
  MarkerClient next(f.endpoint->socket_path(), -1, "next");
  EXPECT_EQ(next.slot(), 0);
}

TEST(MarkerSource, OneSenderCannotMakeItHoldWithoutBound) {
  Fixture f;
  MarkerClient c(f.endpoint->socket_path(), -1, "greedy");
  std::vector<std::pair<std::string, double>> names;
  for (size_t i = 0; i < MarkerSource::kMaxScalars + 50; ++i) {
    names.emplace_back(fmt::format("s{}", i), 1.0);
  }
  c.Scalars(names);
  for (size_t i = 0; i < MarkerSource::kMaxOpenPhases + 4; ++i) {
    c.PhaseBegin(fmt::format("p{}", i));
  }
  Sample s = f.Read(1.0);
  EXPECT_EQ(s.training.scalars.size(), MarkerSource::kMaxScalars);
  EXPECT_EQ(s.training.phase, fmt::format("p{}", MarkerSource::kMaxOpenPhases - 1));
  std::string said;
  for (const Notice& n : f.notices) said += n.message + "\n";
  EXPECT_NE(said.find("scalar names"), std::string::npos) << said;
  EXPECT_NE(said.find("phases"), std::string::npos) << said;
  // Said once each, not on every marker.
  f.notices.clear();
  c.Scalars({{"another", 2.0}});
  f.Read(2.0);
  EXPECT_TRUE(f.notices.empty());
}

TEST(MarkerSource, RemembersAtMostSoManyProcessesThoseGoneFirst) {
  Fixture f;
  int fd = ::socket(AF_UNIX, SOCK_SEQPACKET, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, f.endpoint->socket_path().c_str(), sizeof(addr.sun_path) - 1);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  auto say = [&](std::string_view type, int pid) {
    std::string text = fmt::format(R"({{"v":1,"type":"{}","pid":{},"t":{}}})", type, pid, pid);
    ASSERT_EQ(::send(fd, text.data(), text.size(), 0), static_cast<ssize_t>(text.size()));
  };
  size_t starts = 0;
  auto read = [&](double t) {
    for (const TrainingEvent& e : f.Read(t).training.events) {
      if (e.type == EventType::kClientStart) ++starts;
    }
  };
  const int over = static_cast<int>(MarkerSource::kMaxProcesses) + 76;
  for (int pid = 1; pid <= over; ++pid) {
    say("hello", pid);
    if (pid % 100 == 0) read(pid);
  }
  read(over + 1);
  EXPECT_EQ(starts, MarkerSource::kMaxProcesses);
  std::string said;
  for (const Notice& n : f.notices) said += n.message;
  EXPECT_NE(said.find("more than 1024 training processes"), std::string::npos) << said;
  // One says goodbye: a new one takes its place.
  say("bye", 1);
  say("hello", 5000);
  read(5001);
  EXPECT_EQ(starts, MarkerSource::kMaxProcesses + 1);
  ::close(fd);
}

TEST(MarkerSource, ParsesAtMostAMegabyteATickAndTheRestNextTick) {
  Fixture f;
  // 30 datagrams of 60 KB, one per connection (a socket buffer holds one).
  std::string padding(60000, 'x');
  std::string hello = R"({"v":1,"type":"hello","pid":1,"t":1,"framework":")" + padding + "\"}";
  std::vector<int> fds;
  for (int i = 0; i < 30; ++i) {
    int fd = ::socket(AF_UNIX, SOCK_SEQPACKET, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, f.endpoint->socket_path().c_str(), sizeof(addr.sun_path) - 1);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    ASSERT_EQ(::send(fd, hello.data(), hello.size(), 0), static_cast<ssize_t>(hello.size()));
    fds.push_back(fd);
  }
  size_t first = f.Read(1.0).training.events.size();
  size_t second = f.Read(2.0).training.events.size();
  EXPECT_EQ(first, (MarkerSource::kMaxBytesPerTick + hello.size() - 1) / hello.size());
  EXPECT_EQ(first + second, 30u);
  for (int fd : fds) ::close(fd);
}

TEST(MarkerSource, RefusesConnectionsBeyondTheCapAndSaysSo) {
  rlimit limit{};
  ::getrlimit(RLIMIT_NOFILE, &limit);
  rlimit raised{4096, std::max<rlim_t>(limit.rlim_max, 4096)};
  if (::setrlimit(RLIMIT_NOFILE, &raised) != 0) GTEST_SKIP() << "cannot raise RLIMIT_NOFILE";
  Fixture f;
  std::vector<int> fds;
  for (size_t i = 0; i < MarkerEndpoint::kMaxClients + 5; ++i) {
    int fd = ::socket(AF_UNIX, SOCK_SEQPACKET, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, f.endpoint->socket_path().c_str(), sizeof(addr.sun_path) - 1);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    fds.push_back(fd);
    if (i % 100 == 99) f.Read(1.0);  // the backlog is drained as it fills
  }
  f.Read(2.0);
  EXPECT_EQ(f.endpoint->refused_connections(), 5u);
  std::string said;
  for (const Notice& n : f.notices) said += n.message;
  EXPECT_NE(said.find("more than 1024"), std::string::npos) << said;
  for (int fd : fds) ::close(fd);
  ::setrlimit(RLIMIT_NOFILE, &limit);
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
  auto marker = [](EventType type, int pid, int rank, double t, int64_t epoch, int64_t steps) {
    TrainingEvent m;
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
  s.training.events = {marker(EventType::kEpochBegin, 10, 0, 100, 0, 0),
                       marker(EventType::kEpochBegin, 11, 1, 100.5, 0, 0)};
  tracker.OnSample(s, &events);
  s.training.events = {marker(EventType::kEpochEnd, 10, 0, 104, 0, 40)};
  tracker.OnSample(s, &events);
  EXPECT_TRUE(events.empty());  // rank 1 is still in epoch 0
  s.training.events = {marker(EventType::kEpochEnd, 11, 1, 105, 0, 40)};
  tracker.OnSample(s, &events);
  ASSERT_EQ(events.size(), 1u);
  const auto& rec = events[0].fields;
  EXPECT_EQ(events[0].type, EventType::kEpoch);
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

TEST(PhaseTracker, EpochsBegunAndNeverEndedAreBounded) {
  PhaseTracker tracker;
  std::vector<Event> events;
  Sample s;
  for (int64_t e = 0; e < 70; ++e) {
    TrainingEvent begin;
    begin.type = EventType::kEpochBegin;
    begin.pid = 1;
    begin.t = 100 + static_cast<double>(e);
    begin.epoch = e;
    s.training.events = {begin};
    tracker.OnSample(s, &events);
  }
  // 64 stay open; the six lowest went out as incomplete records.
  ASSERT_EQ(events.size(), 6u);
  EXPECT_EQ(events[0].fields["epoch"], 0);
  EXPECT_EQ(events[0].fields["complete"], false);
  EXPECT_EQ(events[5].fields["epoch"], 5);
  events.clear();
  tracker.OnFinish(200, &events);
  EXPECT_EQ(events.size(), 64u);
}

TEST(PhaseTracker, EpochRecordSaysWhichCallItBelongsTo) {
  PhaseTracker tracker;
  std::vector<Event> events;
  Sample s;
  for (int64_t epoch : {0, 1}) {
    TrainingEvent begin;
    begin.type = EventType::kEpochBegin;
    begin.t = 100 + static_cast<double>(epoch);
    begin.epoch = epoch;
    if (epoch == 1) begin.call = 4;
    TrainingEvent end = begin;
    end.type = EventType::kEpochEnd;
    end.call.reset();
    end.t += 0.5;
    s.training.events = {begin, end};
    tracker.OnSample(s, &events);
  }
  ASSERT_EQ(tracker.Epochs().size(), 2u);
  EXPECT_FALSE(tracker.Epochs()[0].call);  // a client that did not say
  EXPECT_EQ(tracker.Epochs()[1].call, 4);
}

TEST(PhaseTracker, EpochEnergyIntegratesPowerHeldBetweenReadings) {
  PhaseTracker tracker;
  std::vector<Event> events;
  TrainingEvent begin;
  begin.type = EventType::kEpochBegin;
  begin.pid = 1;
  begin.t = 100;
  begin.epoch = 0;
  TrainingEvent end = begin;
  end.type = EventType::kEpochEnd;
  end.t = 102;
  end.steps = 10;
  for (int i = 0; i <= 20; ++i) {  // 2 s at 10 Hz
    Sample s;
    s.mono_s = 50 + i * 0.1;
    GpuSample& g = s.gpus.emplace_back();
    g.index = 0;
    g.power_watts = 250;
    if (i % 10 == 0) s.host.cpu_power_watts = 40;  // RAPL: once per row
    if (i == 0) s.training.events = {begin};
    if (i == 20) s.training.events = {end};
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
  TrainingEvent begin;
  begin.type = EventType::kEpochBegin;
  begin.pid = 1;
  begin.t = 10;
  begin.epoch = 3;
  // Phase changes as the marker source reports them (train, eval nested in it).
  s.training.events = {begin};
  s.training.phase_changes = {{10, "train", true}};
  tracker.OnSample(s, &events);
  s.training.events.clear();
  s.training.phase_changes = {{18, "eval", true}};
  tracker.OnSample(s, &events);
  s.training.phase_changes = {{20, "train", false}};
  tracker.OnSample(s, &events);
  s.training.phase_changes.clear();
  tracker.OnFinish(25, &events);
  auto phases = PhasesToJson(tracker.Phases());
  EXPECT_DOUBLE_EQ(phases["train"]["duration_s"].get<double>(), 13.0);
  EXPECT_DOUBLE_EQ(phases["eval"]["duration_s"].get<double>(), 2.0);
  EXPECT_EQ(phases.begin().key(), "train");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].fields["complete"], false);
  EXPECT_DOUBLE_EQ(events[0].fields["duration_s"].get<double>(), 15.0);
}

}  // namespace
}  // namespace tv::markers_test
