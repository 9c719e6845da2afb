// AlertActions as a whole: the signal action, Notify's cost, Finish. The
// command, webhook and Alertmanager actions have tests of their own.
#include "actions/actions.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include "actions/actions_internal.h"
#include "actions/actions_test_util.h"

extern char** environ;

namespace tv::actions_test {
namespace {

using namespace testing_alerts;
using State = AlertNotice::State;

pid_t SpawnSleep() {
  pid_t pid = 0;
  const char* argv[] = {"/bin/sleep", "30", nullptr};
  EXPECT_EQ(posix_spawn(&pid, argv[0], nullptr, nullptr, const_cast<char**>(argv), environ), 0);
  return pid;
}

TEST(AlertSignal, SignalsTheJobWhenItFiresAndSaysSo) {
  pid_t job = SpawnSleep();
  AlertRule rule = Rule("zombie-gpu");
  rule.actions.signal = SIGTERM;
  auto rules = Rules({rule});
  AlertContext context = Context("");
  context.job_pid = job;
  Recorder recorder;
  AlertActions actions(rules, context, recorder.Callback());
  actions.Start();
  // Only the beginning of a firing signals.
  actions.Notify(Notice((*rules)[0], State::kRepeat));
  actions.Notify(Notice((*rules)[0], State::kResolved));
  actions.Finish(5);
  int status = 0;
  EXPECT_EQ(::waitpid(job, &status, WNOHANG), 0) << "signalled without firing";
  EXPECT_TRUE(recorder.Of("alert_action").empty());

  AlertActions firing(rules, context, recorder.Callback());
  firing.Start();
  firing.Notify(Notice((*rules)[0], State::kFiring));
  firing.Finish(5);
  ASSERT_EQ(::waitpid(job, &status, 0), job);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  auto said = recorder.Of("alert_action");
  ASSERT_EQ(said.size(), 1u);
  EXPECT_EQ(
      said[0].fields,
      nlohmann::ordered_json(
          {{"alert", "zombie-gpu"}, {"action", "signal"}, {"signal", "SIGTERM"}, {"pid", job}}));
}

TEST(AlertSignal, NoJobNoSignal) {
  AlertRule rule = Rule("r");
  rule.actions.signal = SIGINT;
  auto rules = Rules({rule});
  Recorder recorder;
  AlertActions actions(rules, Context(""), recorder.Callback());  // job_pid 0
  actions.Start();
  actions.Notify(Notice((*rules)[0], State::kFiring));
  actions.Finish(5);
  EXPECT_TRUE(recorder.Of("alert_action").empty());
  EXPECT_TRUE(recorder.Of("alert_action_failed").empty());
}

TEST(AlertSignal, AJobAlreadyGoneIsReportedOnce) {
  pid_t job = SpawnSleep();
  ::kill(job, SIGKILL);
  ::waitpid(job, nullptr, 0);
  AlertRule rule = Rule("r");
  rule.actions.signal = SIGINT;
  auto rules = Rules({rule});
  AlertContext context = Context("");
  context.job_pid = job;
  Recorder recorder;
  AlertActions actions(rules, context, recorder.Callback());
  actions.Start();
  actions.Notify(Notice((*rules)[0], State::kFiring));
  actions.Notify(Notice((*rules)[0], State::kFiring));
  actions.Finish(5);
  auto failed = recorder.Of("alert_action_failed");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].fields["action"], "signal");
  EXPECT_NE(failed[0].fields["message"].get<std::string>().find("cannot send SIGINT"),
            std::string::npos);
}

TEST(AlertActions, TimesAreRfc3339InUtc) {
  EXPECT_EQ(alert_actions::Rfc3339(1764529200.5), "2025-11-30T19:00:00.500Z");
  EXPECT_EQ(alert_actions::Rfc3339(0), "1970-01-01T00:00:00.000Z");
}

TEST(AlertActions, RulesWithoutActionsCostNothing) {
  AlertRule plain = Rule("plain");
  auto rules = Rules({plain});
  AlertActions actions(rules, Context(""), nullptr);
  actions.Start();
  actions.Notify(Notice((*rules)[0], State::kFiring));
  auto start = std::chrono::steady_clock::now();
  actions.Finish(5);
  EXPECT_LT(SecondsSince(start), 4.0);  // not the 5 s grace
}

TEST(AlertActions, FinishWithoutStartReturnsAtOnce) {
  TempDir dir;
  AlertRule rule = Rule("never");
  rule.actions.command = {"/bin/sh", "-c", "touch \"$0\"", dir / "ran"};
  auto rules = Rules({rule});
  AlertActions actions(rules, Context(dir.path()), nullptr);
  actions.Notify(Notice((*rules)[0], State::kFiring));
  auto start = std::chrono::steady_clock::now();
  actions.Finish(5);
  EXPECT_LT(SecondsSince(start), 4.0);  // not the 5 s grace
  EXPECT_FALSE(std::filesystem::exists(dir / "ran"));
}

// A command still running when the grace ends is stopped before Finish
// returns; the stop and the notice left queued behind it are said.
TEST(AlertActions, FinishStopsAHungCommandBeforeItReturns) {
  TempDir dir;
  std::string script = dir / "hang.sh";
  WriteScript(script, "echo $$ > \"$1/pid\"; exec sleep 30\n");
  AlertRule rule = Rule("hung");
  rule.actions.command = {script, dir.path()};
  auto rules = Rules({rule});
  Recorder recorder;
  auto actions = std::make_unique<AlertActions>(rules, Context(dir.path()), recorder.Callback());
  actions->Start();
  actions->Notify(Notice((*rules)[0], State::kFiring));
  actions->Notify(Notice((*rules)[0], State::kResolved));
  ASSERT_TRUE(WaitFor([&] { return !ReadFile(dir / "pid").empty(); }, 5));
  auto start = std::chrono::steady_clock::now();
  actions->Finish(1.0);
  double took = SecondsSince(start);
  EXPECT_GE(took, 0.9);  // SIGTERM ended it at once: the message below says so
  pid_t pid = std::stoi(ReadFile(dir / "pid"));
  EXPECT_NE(::kill(pid, 0), 0) << "the command outlived the run";
  auto failed = recorder.Of("alert_action_failed");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_NE(failed[0].fields["message"].get<std::string>().find(
                "was still running when the run ended (was killed by SIGTERM)"),
            std::string::npos)
      << failed[0].fields.dump();
  auto lost = recorder.Of("alert_notices_lost");
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].fields["count"], 1);  // the resolved notice, queued behind it
  EXPECT_EQ(lost[0].fields["actions"][0]["run_ended"], 1);
  actions.reset();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(recorder.Of("alert_action_failed").size(), 1u);  // nothing after Finish
}

// Notices never delivered are said once in all, whatever their number.
TEST(AlertActions, LostNoticesAreSaidOnceWithTheirCount) {
  TempDir dir;
  AlertRule rule = Rule("slow");
  rule.actions.command = {"/bin/sleep", "30"};
  auto rules = Rules({rule});
  Recorder recorder;
  AlertActions actions(rules, Context(dir.path()), recorder.Callback());
  for (int i = 0; i < 100; ++i) actions.Notify(Notice((*rules)[0], State::kRepeat));
  actions.Start();
  actions.Finish(0.3);
  auto lost = recorder.Of("alert_notices_lost");
  ASSERT_EQ(lost.size(), 1u);
  const auto& f = lost[0].fields;
  EXPECT_EQ(f["count"], 99) << f.dump();  // one ran, and was stopped
  ASSERT_EQ(f["actions"].size(), 1u);
  EXPECT_EQ(f["actions"][0]["alert"], "slow");
  EXPECT_EQ(f["actions"][0]["action"], "command");
  EXPECT_EQ(f["actions"][0]["queue_full"], 100 - int(AlertActions::kQueueCapacity));
  EXPECT_EQ(f["actions"][0]["run_ended"], int(AlertActions::kQueueCapacity) - 1);
}

TEST(AlertActions, NothingLostNothingSaid) {
  TempDir dir;
  AlertRule rule = Rule("quick");
  rule.actions.command = {"/bin/true"};
  auto rules = Rules({rule});
  Recorder recorder;
  AlertActions actions(rules, Context(dir.path()), recorder.Callback());
  actions.Start();
  actions.Notify(Notice((*rules)[0], State::kFiring));
  actions.Finish(5);
  EXPECT_TRUE(recorder.Of("alert_notices_lost").empty());
  EXPECT_TRUE(recorder.Of("alert_action_failed").empty());
}

}  // namespace
}  // namespace tv::actions_test
