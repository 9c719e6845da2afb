// The command action, with real processes (small shell scripts the tests write).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <filesystem>

#include "actions/actions.h"
#include "actions/actions_test_util.h"

namespace tv::actions_command_test {
namespace {

using namespace testing_alerts;
using State = AlertNotice::State;

// Running, not a zombie waiting for its parent.
bool Alive(pid_t pid) {
  std::string stat = ReadFile(fmt::format("/proc/{}/stat", pid));
  size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
}

TEST(AlertCommand, GetsArgvLiterallyTheEnvironmentAndTheJsonOnStdin) {
  TempDir dir;
  std::string script = dir / "record.sh";
  WriteScript(script,
              "out=$1; shift\n"
              "for a in \"$@\"; do printf '%s\\n' \"$a\" >> \"$out.argv\"; done\n"
              "env | grep '^TRAINVITALS_ALERT_' | sort > \"$out.env\"\n"
              "cat > \"$out.stdin\"\n"
              "echo said on stdout; echo said on stderr >&2\n");
  std::string injected = "$(touch " + (dir / "pwned") + "); echo *";
  AlertRule rule = Rule("gpu-low-util");
  rule.actions.command = {script, dir / "got", injected, "two words", ""};
  auto rules = Rules({rule});
  Recorder recorder;
  AlertActions actions(rules, Context(dir.path()), recorder.Callback());
  actions.Start();
  actions.Notify(Notice((*rules)[0], State::kFiring, 3));
  actions.Finish(10);

  EXPECT_EQ(ReadFile(dir / "got.argv"), injected + "\ntwo words\n\n");
  EXPECT_FALSE(std::filesystem::exists(dir / "pwned"));
  std::string env = ReadFile(dir / "got.env");
  for (const std::string& line : std::vector<std::string>{
           "TRAINVITALS_ALERT_NAME=gpu-low-util", "TRAINVITALS_ALERT_STATE=firing",
           "TRAINVITALS_ALERT_SEVERITY=warning", "TRAINVITALS_ALERT_GPU=3",
           "TRAINVITALS_ALERT_VALUE=0.125", "TRAINVITALS_ALERT_THRESHOLD=0.2",
           "TRAINVITALS_ALERT_SUMMARY=GPU 0 under 20 %",
           "TRAINVITALS_ALERT_STARTS_AT=1764529200.500", "TRAINVITALS_ALERT_RUN=resnet-42",
           "TRAINVITALS_ALERT_RUN_DIR=" + dir.path()}) {
    EXPECT_NE(env.find(line + "\n"), std::string::npos) << line << " not in\n" << env;
  }
  std::string in = ReadFile(dir / "got.stdin");
  ASSERT_FALSE(in.empty());
  EXPECT_EQ(in.back(), '\n');
  auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["name"], "gpu-low-util");
  EXPECT_EQ(j["gpu"], 3);
  EXPECT_EQ(j["text"], "[FIRING] gpu-low-util (GPU 3) on node7/resnet-42: GPU 0 under 20 %");
  std::string log = ReadFile(dir / "alerts/gpu-low-util.log");
  EXPECT_NE(log.find("firing gpu-low-util (GPU 3): " + script), std::string::npos) << log;
  EXPECT_NE(log.find("said on stdout\n"), std::string::npos) << log;
  EXPECT_NE(log.find("said on stderr\n"), std::string::npos) << log;
  EXPECT_TRUE(recorder.Of("alert_action_failed").empty());
}

TEST(AlertCommand, InheritsTheEnvironment) {
  TempDir dir;
  ::setenv("TV_ALERT_TEST_INHERITED", "yes", 1);
  AlertRule rule = Rule("r");
  rule.actions.command = {"/bin/sh", "-c", "echo \"$TV_ALERT_TEST_INHERITED\" > \"$0\"",
                          dir / "inherited"};
  auto rules = Rules({rule});
  AlertActions actions(rules, Context(dir.path()), nullptr);
  actions.Start();
  actions.Notify(Notice((*rules)[0], State::kResolved));
  actions.Finish(10);
  ::unsetenv("TV_ALERT_TEST_INHERITED");
  EXPECT_EQ(ReadFile(dir / "inherited"), "yes\n");
}

TEST(AlertCommand, TimeoutStopsItsProcessGroupAndIsReportedOnce) {
  TempDir dir;
  std::string script = dir / "hang.sh";
  WriteScript(script, "echo $$ >> \"$1/pids\"; sleep 30 & echo $! >> \"$1/pids\"; wait\n");
  AlertRule rule = Rule("slow");
  rule.actions.command = {script, dir.path()};
  rule.actions.command_timeout_s = 0.3;
  auto rules = Rules({rule});
  Recorder recorder;
  AlertActions actions(rules, Context(dir.path()), recorder.Callback());
  actions.Start();
  auto start = std::chrono::steady_clock::now();
  actions.Notify(Notice((*rules)[0], State::kFiring));
  actions.Notify(Notice((*rules)[0], State::kResolved));
  actions.Finish(10);
  double took = SecondsSince(start);
  EXPECT_GE(took, 0.6);  // the two ran one after the other, each to its timeout
  EXPECT_LT(took, 9.0);  // and were not waited for to the end of the grace
  auto failed = recorder.Of("alert_action_failed");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].fields["alert"], "slow");
  EXPECT_EQ(failed[0].fields["action"], "command");
  std::string message = failed[0].fields["message"];
  EXPECT_NE(message.find("timed out after 0.3 s"), std::string::npos) << message;
  std::istringstream pids(ReadFile(dir / "pids"));
  int count = 0;
  for (pid_t pid; pids >> pid; ++count) {
    EXPECT_TRUE(WaitFor([&] { return !Alive(pid); }, 2)) << pid << " still runs";
  }
  EXPECT_EQ(count, 4);  // two runs, a script and its sleep each
  EXPECT_NE(ReadFile(dir / "alerts/slow.log").find("timed out after 0.3 s: SIGTERM"),
            std::string::npos);
}

TEST(AlertCommand, OneThatIgnoresSigtermIsKilledTwoSecondsLater) {
  TempDir dir;
  std::string script = dir / "stubborn.sh";
  WriteScript(script, "trap '' TERM; echo ready; while :; do sleep 0.05; done\n");
  AlertRule rule = Rule("stubborn");
  rule.actions.command = {script};
  rule.actions.command_timeout_s = 0.2;
  auto rules = Rules({rule});
  Recorder recorder;
  AlertActions actions(rules, Context(dir.path()), recorder.Callback());
  actions.Start();
  auto start = std::chrono::steady_clock::now();
  actions.Notify(Notice((*rules)[0], State::kFiring));
  actions.Finish(10);
  double took = SecondsSince(start);
  EXPECT_GE(took, 2.1);  // SIGKILL came after SIGTERM's two seconds, not at once
  auto failed = recorder.Of("alert_action_failed");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_NE(failed[0].fields["message"].get<std::string>().find("SIGKILL"), std::string::npos)
      << failed[0].fields["message"];
  EXPECT_NE(ReadFile(dir / "alerts/stubborn.log").find("still running: SIGKILL"),
            std::string::npos);
}

// The run ends while the command runs and ignores SIGTERM: SIGKILL 2 s later,
// before Finish returns, and its log says both.
TEST(AlertCommand, OneStillRunningAtTheEndIsKilledBeforeFinishReturns) {
  TempDir dir;
  std::string script = dir / "stubborn.sh";
  WriteScript(script, "trap '' TERM; echo $$ > \"$1/pid\"; while :; do sleep 0.05; done\n");
  AlertRule rule = Rule("stubborn");
  rule.actions.command = {script, dir.path()};
  auto rules = Rules({rule});
  Recorder recorder;
  AlertActions actions(rules, Context(dir.path()), recorder.Callback());
  actions.Start();
  actions.Notify(Notice((*rules)[0], State::kFiring));
  ASSERT_TRUE(WaitFor([&] { return !ReadFile(dir / "pid").empty(); }, 5));
  auto start = std::chrono::steady_clock::now();
  actions.Finish(0.2);
  double took = SecondsSince(start);
  EXPECT_GE(took, 2.1);  // SIGKILL came after SIGTERM's two seconds; the log says both
  pid_t pid = std::stoi(ReadFile(dir / "pid"));
  EXPECT_FALSE(Alive(pid)) << "the command outlived the run";
  std::string log = ReadFile(dir / "alerts/stubborn.log");
  EXPECT_NE(log.find("=== was still running when the run ended: SIGTERM\n"), std::string::npos)
      << log;
  EXPECT_NE(log.find("=== still running: SIGKILL\n"), std::string::npos) << log;
  EXPECT_NE(log.find("=== was still running when the run ended (was killed by SIGKILL)\n"),
            std::string::npos)
      << log;
}

// The monitor dies of SIGKILL while the command runs: the keeper, told by
// its parent-death signal, stops the command's group itself.
TEST(AlertCommand, TheKeeperStopsTheCommandWhenItsMonitorIsKilled) {
  TempDir dir;
  std::string script = dir / "stubborn.sh";
  WriteScript(script,
              "sleep 30 & echo $! > \"$1/child\"; trap '' TERM; echo $$ > \"$1/pid\"; "
              "while :; do sleep 0.05; done\n");
  pid_t monitor = ::fork();
  ASSERT_GE(monitor, 0);
  if (monitor == 0) {
    AlertRule rule = Rule("orphan");
    rule.actions.command = {script, dir.path()};
    auto rules = Rules({rule});
    AlertActions actions(rules, Context(dir.path()), nullptr);
    actions.Start();
    actions.Notify(Notice((*rules)[0], State::kFiring));
    for (;;) ::pause();
  }
  bool started = WaitFor(
      [&] { return !ReadFile(dir / "pid").empty() && !ReadFile(dir / "child").empty(); }, 5);
  ::kill(monitor, SIGKILL);
  ::waitpid(monitor, nullptr, 0);
  ASSERT_TRUE(started);
  pid_t pid = std::stoi(ReadFile(dir / "pid"));
  pid_t child = std::stoi(ReadFile(dir / "child"));
  EXPECT_TRUE(WaitFor([&] { return !Alive(child); }, 1.5)) << "SIGTERM did not reach its group";
  EXPECT_TRUE(Alive(pid)) << "the command ignores SIGTERM: it lives until SIGKILL";
  EXPECT_TRUE(WaitFor([&] { return !Alive(pid); }, 3)) << "the command outlived its monitor";
  std::string log = ReadFile(dir / "alerts/orphan.log");
  EXPECT_NE(log.find("=== trainvitals ended while this ran: SIGTERM\n"), std::string::npos) << log;
  EXPECT_NE(log.find("=== still running: SIGKILL\n"), std::string::npos) << log;
}

TEST(AlertCommand, RunsOneAtATimePerRule) {
  TempDir dir;
  std::string script = dir / "lock.sh";
  WriteScript(script,
              "mkdir \"$1/lock\" || echo overlap >> \"$1/overlap\"\n"
              "sleep 0.2; rmdir \"$1/lock\"; echo \"$TRAINVITALS_ALERT_STATE\" >> \"$1/done\"\n");
  AlertRule rule = Rule("serial");
  rule.actions.command = {script, dir.path()};
  auto rules = Rules({rule});
  AlertActions actions(rules, Context(dir.path()), nullptr);
  actions.Start();
  auto start = std::chrono::steady_clock::now();
  actions.Notify(Notice((*rules)[0], State::kFiring));
  actions.Notify(Notice((*rules)[0], State::kRepeat));
  actions.Notify(Notice((*rules)[0], State::kResolved));
  actions.Finish(10);
  EXPECT_GE(SecondsSince(start), 0.6);
  EXPECT_EQ(ReadFile(dir / "done"), "firing\nrepeat\nresolved\n");
  EXPECT_FALSE(std::filesystem::exists(dir / "overlap"));
}

TEST(AlertCommand, ASlowRuleDoesNotDelayAnother) {
  TempDir dir;
  AlertRule slow = Rule("slow");
  slow.actions.command = {"/bin/sleep", "5"};
  AlertRule quick = Rule("quick");
  quick.actions.command = {"/bin/sh", "-c", "touch \"$0\"", dir / "quick-ran"};
  auto rules = Rules({slow, quick});
  AlertActions actions(rules, Context(dir.path()), nullptr);
  actions.Start();
  actions.Notify(Notice((*rules)[0], State::kFiring));
  actions.Notify(Notice((*rules)[1], State::kFiring));
  EXPECT_TRUE(WaitFor([&] { return std::filesystem::exists(dir / "quick-ran"); }, 2));
  actions.Finish(0.1);  // abandons the sleep: it is stopped
}

TEST(AlertCommand, FailuresAreReportedOncePerRule) {
  TempDir dir;
  AlertRule missing = Rule("missing");
  missing.actions.command = {"no-such-command-tv-test"};
  AlertRule unrunnable = Rule("unrunnable");
  unrunnable.actions.command = {dir / "absent.sh"};
  AlertRule failing = Rule("failing");
  failing.actions.command = {"/bin/false"};
  auto rules = Rules({missing, unrunnable, failing});
  Recorder recorder;
  AlertActions actions(rules, Context(dir.path()), recorder.Callback());
  actions.Start();
  for (int i = 0; i < 3; ++i) {
    for (const AlertRule& r : *rules) actions.Notify(Notice(r, State::kFiring));
  }
  actions.Finish(10);
  std::map<std::string, std::string> by_alert;
  for (const Event& e : recorder.Of("alert_action_failed")) {
    EXPECT_EQ(e.fields["action"], "command");
    EXPECT_FALSE(by_alert.contains(e.fields["alert"])) << "said twice: " << e.fields.dump();
    by_alert[e.fields["alert"]] = e.fields["message"];
  }
  ASSERT_EQ(by_alert.size(), 3u);
  EXPECT_NE(by_alert["missing"].find("command not found"), std::string::npos);
  EXPECT_NE(by_alert["unrunnable"].find("No such file or directory"), std::string::npos)
      << by_alert["unrunnable"];
  EXPECT_NE(by_alert["failing"].find("exited with code 1"), std::string::npos)
      << by_alert["failing"];
  EXPECT_NE(by_alert["failing"].find("alerts/failing.log"), std::string::npos);
}

// `trainvitals run` reaps every child of its process (waitpid(-1)): the
// command's exit status must still reach the action.
TEST(AlertCommand, ExitStatusSurvivesAProcessThatReapsEveryChild) {
  TempDir dir;
  AlertRule rule = Rule("reaped");
  rule.actions.command = {"/bin/sh", "-c", "sleep 0.2; exit 3"};
  auto rules = Rules({rule});
  Recorder recorder;
  std::atomic<bool> stop{false};
  std::thread reaper([&] {
    while (!stop) {
      while (::waitpid(-1, nullptr, WNOHANG) > 0) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  AlertActions actions(rules, Context(dir.path()), recorder.Callback());
  actions.Start();
  actions.Notify(Notice((*rules)[0], State::kFiring));
  actions.Finish(10);
  stop = true;
  reaper.join();
  auto failed = recorder.Of("alert_action_failed");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_NE(failed[0].fields["message"].get<std::string>().find("exited with code 3"),
            std::string::npos)
      << failed[0].fields["message"];
}

// When the queue is full, the oldest undelivered notice gives way.
TEST(AlertCommand, AFullQueueDropsTheOldest) {
  TempDir dir;
  AlertRule rule = Rule("flood");
  rule.actions.command = {"/bin/sh", "-c", "echo \"$TRAINVITALS_ALERT_SUMMARY\" >> \"$0\"",
                          dir / "seen"};
  auto rules = Rules({rule});
  AlertActions actions(rules, Context(dir.path()), nullptr);
  for (int i = 0; i < 100; ++i) {
    actions.Notify(Notice((*rules)[0], State::kRepeat, 0, std::to_string(i)));
  }
  actions.Start();
  actions.Finish(60);
  std::string expected;
  for (int i = 100 - int(AlertActions::kQueueCapacity); i < 100; ++i)
    expected += std::to_string(i) + "\n";
  EXPECT_EQ(ReadFile(dir / "seen"), expected);
}

}  // namespace
}  // namespace tv::actions_command_test
