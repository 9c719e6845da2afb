// The webhook action against an in-process HTTP server on 127.0.0.1, and
// the URL check the rule loader uses.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <condition_variable>

#include "actions/actions.h"
#include "actions/actions_test_util.h"

namespace tv::actions_http_test {
namespace {

using namespace testing_alerts;
using State = AlertNotice::State;

// A server on a free port of 127.0.0.1 that answers POSTs with `handler`.
class TestServer {
 public:
  using Handler = std::function<void(TestServer&, const httplib::Request&, httplib::Response&)>;
  explicit TestServer(const Handler& handler) {
    server_.Post(".*", [this, handler](const httplib::Request& req, httplib::Response& res) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        bodies_.push_back(req.body);
        content_types_.push_back(req.get_header_value("Content-Type"));
        times_.push_back(std::chrono::steady_clock::now());
      }
      handler(*this, req, res);
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    WaitFor([this] { return server_.is_running(); }, 5);
  }
  ~TestServer() {
    Release();
    server_.stop();
    thread_.join();
  }
  std::string Url(std::string_view path = "/hook") const {
    return fmt::format("http://127.0.0.1:{}{}", port_, path);
  }
  size_t Requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return bodies_.size();
  }
  std::vector<std::string> Bodies() const {
    std::lock_guard<std::mutex> lock(mu_);
    return bodies_;
  }
  std::vector<std::string> ContentTypes() const {
    std::lock_guard<std::mutex> lock(mu_);
    return content_types_;
  }
  std::vector<std::chrono::steady_clock::time_point> Times() const {
    std::lock_guard<std::mutex> lock(mu_);
    return times_;
  }
  // For a hanging handler: waits up to `seconds` or until released.
  void Hang(double seconds) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return released_; });
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool released_ = false;
  std::vector<std::string> bodies_;
  std::vector<std::string> content_types_;
  std::vector<std::chrono::steady_clock::time_point> times_;
};

TEST(AlertWebhook, PostsTheNoticeJsonWithItsText) {
  TestServer server(
      [](TestServer&, const httplib::Request&, httplib::Response& res) { res.status = 200; });
  AlertRule rule = Rule("gpu-low-util");
  rule.actions.webhook = server.Url("/services/T0/B0/secret?x=1");
  auto rules = Rules({rule});
  Recorder recorder;
  AlertActions actions(rules, Context(""), recorder.Callback());
  actions.Start();
  actions.Notify(Notice((*rules)[0], State::kFiring, 1));
  actions.Notify(Notice((*rules)[0], State::kResolved, 1));
  actions.Finish(5);
  auto bodies = server.Bodies();
  ASSERT_EQ(bodies.size(), 2u);
  auto firing = nlohmann::json::parse(bodies[0]);
  EXPECT_EQ(firing["text"], "[FIRING] gpu-low-util (GPU 1) on node7/resnet-42: GPU 0 under 20 %");
  EXPECT_EQ(firing["state"], "firing");
  EXPECT_EQ(nlohmann::json::parse(bodies[1])["state"], "resolved");
  EXPECT_EQ(server.ContentTypes()[0], "application/json");
  EXPECT_TRUE(recorder.Of("alert_action_failed").empty());
}

// 100 notices to a server that never answers: no Notify waits for it (the
// server holds each request 30 s and the client's read timeout is 5 s, so one
// that waited would take seconds), and Finish gives the queue its grace and no
// more. How fast Notify is, is bench/alerts_bench.cc's BM_AlertNotifyHungWebhook.
TEST(AlertWebhook, AHungServerCostsNotifyNothingAndFinishKeepsToItsGrace) {
  TestServer server([](TestServer& self, const httplib::Request&, httplib::Response& res) {
    self.Hang(30);
    res.status = 200;
  });
  AlertRule rule = Rule("r");
  rule.actions.webhook = server.Url();
  auto rules = Rules({rule});
  Recorder recorder;
  AlertActions actions(rules, Context(""), recorder.Callback());
  actions.Start();
  auto all = std::chrono::steady_clock::now();
  for (int i = 0; i < 100; ++i) {
    actions.Notify(Notice((*rules)[0], State::kRepeat, 0, std::to_string(i)));
  }
  EXPECT_LT(SecondsSince(all), 4.0);  // not one 5 s read timeout
  auto start = std::chrono::steady_clock::now();
  actions.Finish(1.0);
  double took = SecondsSince(start);
  EXPECT_GE(took, 0.9);
  EXPECT_LT(took, 4.0);              // not the 5 s read timeout, nor the server's 30 s
  EXPECT_EQ(server.Requests(), 1u);  // the first one, still waiting for its answer
  EXPECT_TRUE(recorder.Of("alert_action_failed").empty());  // nothing said after Finish
}

TEST(AlertWebhook, Retries5xxWithBackoffAndReportsOnce) {
  TestServer server([](TestServer&, const httplib::Request&, httplib::Response& res) {
    res.status = 500;
    res.set_content("boom\nmore", "text/plain");
  });
  AlertRule rule = Rule("r");
  rule.actions.webhook = server.Url("/secret-path");
  auto rules = Rules({rule});
  Recorder recorder;
  AlertActions actions(rules, Context(""), recorder.Callback());
  actions.Start();
  actions.Notify(Notice((*rules)[0], State::kFiring));
  ASSERT_TRUE(WaitFor([&] { return !recorder.Of("alert_action_failed").empty(); }, 15));
  auto times = server.Times();
  ASSERT_EQ(times.size(), 4u);  // the first try and three retries
  for (size_t i = 1; i < times.size(); ++i) {
    double gap = std::chrono::duration<double>(times[i] - times[i - 1]).count();
    double backoff = 1 << (i - 1);
    EXPECT_GE(gap, backoff * 0.95) << i;
    EXPECT_LT(gap, backoff * 1.5 + 0.3) << i;  // not yet the next backoff's
  }
  // Later failures are not said again; Finish(1.0) gives up on the retries.
  actions.Notify(Notice((*rules)[0], State::kResolved));
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(WaitFor([&] { return server.Requests() >= 5; }, 2));
  actions.Finish(1.0);
  EXPECT_LT(SecondsSince(start), 4.0);  // not the 7 s of the retries
  auto failed = recorder.Of("alert_action_failed");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].fields["alert"], "r");
  EXPECT_EQ(failed[0].fields["action"], "webhook");
  std::string message = failed[0].fields["message"];
  EXPECT_NE(message.find("HTTP 500: boom (after 4 tries)"), std::string::npos) << message;
  EXPECT_EQ(message.find("secret-path"), std::string::npos) << "the URL's path is its secret";
}

TEST(AlertWebhook, Other4xxIsNotRetried) {
  TestServer server(
      [](TestServer&, const httplib::Request&, httplib::Response& res) { res.status = 404; });
  AlertRule rule = Rule("r");
  rule.actions.webhook = server.Url();
  auto rules = Rules({rule});
  Recorder recorder;
  AlertActions actions(rules, Context(""), recorder.Callback());
  actions.Start();
  for (int i = 0; i < 3; ++i) actions.Notify(Notice((*rules)[0], State::kFiring));
  actions.Finish(5);
  EXPECT_EQ(server.Requests(), 3u);  // no retry
  auto failed = recorder.Of("alert_action_failed");
  ASSERT_EQ(failed.size(), 1u);
  std::string message = failed[0].fields["message"];
  EXPECT_NE(message.find("HTTP 404"), std::string::npos) << message;
  EXPECT_EQ(message.find("tries"), std::string::npos) << message;
}

TEST(AlertWebhook, TooManyRequestsIsRetried) {
  std::atomic<int> calls{0};
  TestServer server([&](TestServer&, const httplib::Request&, httplib::Response& res) {
    res.status = calls++ == 0 ? 429 : 200;
  });
  AlertRule rule = Rule("r");
  rule.actions.webhook = server.Url();
  auto rules = Rules({rule});
  Recorder recorder;
  AlertActions actions(rules, Context(""), recorder.Callback());
  actions.Start();
  actions.Notify(Notice((*rules)[0], State::kFiring));
  actions.Finish(5);
  EXPECT_EQ(server.Requests(), 2u);
  EXPECT_TRUE(recorder.Of("alert_action_failed").empty());
}

// https with a certificate the client is told to trust (SSL_CERT_FILE, as
// OpenSSL reads it), and the same server refused without it.
TEST(AlertWebhook, HttpsChecksTheServersCertificate) {
  if (::access("/usr/bin/openssl", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/openssl";
  TempDir dir;
  std::string make_cert = fmt::format(
      "/usr/bin/openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost "
      "-addext subjectAltName=IP:127.0.0.1,DNS:localhost -keyout {} -out {} 2>/dev/null",
      dir / "key.pem", dir / "cert.pem");
  ASSERT_EQ(std::system(make_cert.c_str()), 0);
  httplib::SSLServer server((dir / "cert.pem").c_str(), (dir / "key.pem").c_str());
  std::atomic<int> posts{0};
  server.Post("/hook", [&](const httplib::Request&, httplib::Response& res) {
    ++posts;
    res.status = 200;
  });
  int port = server.bind_to_any_port("127.0.0.1");
  std::thread listener([&] { server.listen_after_bind(); });
  WaitFor([&] { return server.is_running(); }, 5);

  AlertRule rule = Rule("r");
  rule.actions.webhook = fmt::format("https://127.0.0.1:{}/hook", port);
  auto rules = Rules({rule});
  Recorder untrusted;
  {
    AlertActions actions(rules, Context(""), untrusted.Callback());
    actions.Start();
    actions.Notify(Notice((*rules)[0], State::kFiring));
    actions.Finish(10);
  }
  Recorder trusted;
  ::setenv("SSL_CERT_FILE", (dir / "cert.pem").c_str(), 1);
  {
    AlertActions actions(rules, Context(""), trusted.Callback());
    actions.Start();
    actions.Notify(Notice((*rules)[0], State::kFiring));
    actions.Finish(10);
  }
  ::unsetenv("SSL_CERT_FILE");
  server.stop();
  listener.join();

  auto failed = untrusted.Of("alert_action_failed");
  ASSERT_EQ(failed.size(), 1u);
  std::string message = failed[0].fields["message"];
  EXPECT_NE(message.find("TLS"), std::string::npos) << message;
  // A certificate that fails is not retried (a retried POST says its tries).
  EXPECT_EQ(message.find("tries"), std::string::npos) << message;
  EXPECT_TRUE(trusted.Of("alert_action_failed").empty())
      << trusted.Of("alert_action_failed")[0].fields.dump();
  EXPECT_EQ(posts, 1);
}

}  // namespace
}  // namespace tv::actions_http_test
