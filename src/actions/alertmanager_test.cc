// The Alertmanager action against a real Alertmanager (Debian's
// prometheus-alertmanager), started by the test on a free port.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "actions/actions.h"
#include "actions/actions_internal.h"
#include "actions/actions_test_util.h"
#include "sinks/free_port_fixture.h"

extern char** environ;

namespace tv::alertmanager_test {
namespace {

using namespace testing_alerts;
using State = AlertNotice::State;
using alert_actions::Rfc3339;

constexpr const char* kAlertmanager = "/usr/bin/prometheus-alertmanager";

// A real Alertmanager on 127.0.0.1, without clustering, with one receiver
// that sends nothing.
class Alertmanager {
 public:
  explicit Alertmanager(const TempDir& dir) : port_(testing::FreeLoopbackPort()) {
    std::ofstream(dir / "alertmanager.yml") << "route:\n  receiver: nobody\n"
                                               "receivers:\n  - name: nobody\n";
    std::filesystem::create_directory(dir / "am-data");
    std::vector<std::string> args = {kAlertmanager,
                                     "--config.file=" + (dir / "alertmanager.yml"),
                                     "--storage.path=" + (dir / "am-data"),
                                     "--web.listen-address=127.0.0.1:" + std::to_string(port_),
                                     "--cluster.listen-address=",
                                     "--log.level=warn"};
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, kAlertmanager, nullptr, nullptr, argv.data(), environ) != 0) pid_ = 0;
  }
  ~Alertmanager() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  bool Ready() {
    return pid_ > 0 && WaitFor(
                           [&] {
                             httplib::Client c("127.0.0.1", port_);
                             auto res = c.Get("/-/ready");
                             return res && res->status == 200;
                           },
                           20);
  }
  std::string Url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // GET /api/v2/alerts: the alerts it holds as active (resolved ones are left out).
  nlohmann::json Alerts() const {
    httplib::Client c("127.0.0.1", port_);
    auto res = c.Get("/api/v2/alerts");
    if (!res || res->status != 200) return nlohmann::json::array();
    return nlohmann::json::parse(res->body);
  }

 private:
  int port_;
  pid_t pid_ = 0;
};

// The alert with these labels, or null.
nlohmann::json Find(const nlohmann::json& alerts, std::string_view name, std::string_view gpu) {
  for (const auto& a : alerts) {
    if (a["labels"].value("alertname", "") == name && a["labels"].value("gpu", "") == gpu) return a;
  }
  return nullptr;
}

TEST(AlertAlertmanager, FiringThenResolvedOnARealAlertmanager) {
  if (::access(kAlertmanager, X_OK) != 0) {
    GTEST_SKIP() << kAlertmanager << " is not installed (Debian's prometheus-alertmanager)";
  }
  TempDir dir;
  Alertmanager am(dir);
  ASSERT_TRUE(am.Ready()) << "Alertmanager did not start";

  AlertRule rule = Rule("gpu-low-util");
  rule.severity = "critical";
  rule.actions.alertmanager = am.Url() + "/";
  auto rules = Rules({rule});
  Recorder recorder;
  AlertActions actions(rules, Context(dir.path()), recorder.Callback());
  actions.Start();
  AlertNotice firing = Notice((*rules)[0], State::kFiring, 2);
  firing.starts_at = static_cast<double>(::time(nullptr)) - 30;
  actions.Notify(firing);

  nlohmann::json alert;
  ASSERT_TRUE(WaitFor(
      [&] {
        alert = Find(am.Alerts(), "gpu-low-util", "2");
        return !alert.is_null();
      },
      10))
      << am.Alerts().dump();
  EXPECT_EQ(alert["status"]["state"], "active");
  EXPECT_EQ(alert["labels"], nlohmann::json({{"alertname", "gpu-low-util"},
                                             {"severity", "critical"},
                                             {"gpu", "2"},
                                             {"run", "resnet-42"},
                                             {"host", "node7"},
                                             {"team", "vision"}}));
  EXPECT_EQ(alert["annotations"]["summary"], "GPU 0 under 20 %");
  EXPECT_EQ(alert["annotations"]["expr"], "gpus[].util_ratio < 20%");
  EXPECT_EQ(alert["annotations"]["value"], "0.125");
  EXPECT_EQ(alert["startsAt"].get<std::string>().substr(0, 19),
            Rfc3339(firing.starts_at).substr(0, 19));
  // Valid for four minutes (re-sent every minute while it fires).
  double now = static_cast<double>(::time(nullptr));
  EXPECT_GE(alert["endsAt"].get<std::string>().substr(0, 19), Rfc3339(now + 230).substr(0, 19));
  EXPECT_LE(alert["endsAt"].get<std::string>().substr(0, 19), Rfc3339(now + 241).substr(0, 19));

  AlertNotice resolved = firing;
  resolved.state = State::kResolved;
  resolved.t = static_cast<double>(::time(nullptr));
  actions.Notify(resolved);
  actions.Finish(10);
  EXPECT_TRUE(recorder.Of("alert_action_failed").empty());
  EXPECT_TRUE(WaitFor([&] { return Find(am.Alerts(), "gpu-low-util", "2").is_null(); }, 10))
      << am.Alerts().dump();
}

}  // namespace
}  // namespace tv::alertmanager_test
