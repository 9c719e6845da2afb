// The webhook and Alertmanager actions: JSON POSTed through the HTTP plugin
// (sinks/http_client.h: http and https), with timeouts and retries with backoff.
#include <fmt/format.h>

#include <map>

#include "actions/actions.h"
#include "actions/actions_internal.h"
#include "analysis/alerts/action_url.h"
#include "sinks/http_client.h"

namespace tv {
namespace alert_actions {
namespace {

constexpr int kConnectTimeoutS = 3;
constexpr int kReadTimeoutS = 5;
// The waits before each retry of a network error, a 5xx or a 429.
constexpr std::chrono::seconds kBackoff[] = {std::chrono::seconds(1), std::chrono::seconds(2),
                                             std::chrono::seconds(4)};
// Alertmanager: a firing alert is re-sent this often, valid this long each time
// (as Prometheus does: its resend delay is 1m, endsAt 4 x that).
constexpr std::chrono::seconds kResendEvery{60};
constexpr double kFiringValidS = 4 * 60;

// POSTs `body` to `url` (at `path`): retries a network error, a 5xx or a 429
// after 1, 2 and 4 s. "" when it was taken, else why not.
std::string PostJson(ActionHub& hub, const ActionUrl& url, const std::string& path,
                     const std::string& body) {
  HttpCall call;
  call.host = url.host;
  call.port = url.port;
  call.https = url.https;
  call.path = path.empty() ? "/" : path;
  call.body = body;
  call.connect_timeout_s = kConnectTimeoutS;
  call.read_timeout_s = kReadTimeoutS;
  call.follow_location = true;
  std::string last;
  int tries = 0;
  for (size_t attempt = 0;; ++attempt) {
    ++tries;
    HttpReply res = HttpRequest(call);
    bool retry;
    if (res.status == 0) {
      last = res.error;
      // A certificate that does not verify will not verify a second later.
      retry = !res.tls_refused;
    } else if (res.status >= 200 && res.status < 300) {
      return "";
    } else {
      std::string reply = res.body.substr(0, std::min(res.body.find('\n'), size_t{200}));
      last = fmt::format("{} answered HTTP {}{}{}", url.origin, res.status,
                         reply.empty() ? "" : ": ", reply);
      retry = res.status >= 500 || res.status == 429;
    }
    if (!retry || attempt >= std::size(kBackoff)) break;
    if (!hub.Sleep(kBackoff[attempt])) break;  // the run ended
  }
  return tries > 1 ? fmt::format("{} (after {} tries)", last, tries) : last;
}

class HttpAction : public Action {
 public:
  HttpAction(std::shared_ptr<ActionHub> hub, const AlertRule& rule, const char* kind,
             const std::string& text)
      : Action(std::move(hub), rule, kind) {
    url_error_ = ParseActionUrl(text, &url_);
  }

 protected:
  // False (said once) when the URL is not usable; the rule loader checks it first.
  bool UrlUsable() {
    if (!url_error_.empty()) Fail(fmt::format("the URL is not usable: {}", url_error_));
    return url_error_.empty();
  }
  // False when the POST was not taken; said once, unless the run's end cut it
  // short (the notice is then counted among those the end lost).
  bool Post(const std::string& path, const std::string& body) {
    std::string why = PostJson(hub(), url_, path, body);
    if (why.empty()) return true;
    if (!hub().stopping()) Fail(fmt::format("POST failed: {}", why));
    return false;
  }
  ActionUrl url_;

 private:
  std::string url_error_;
};

class WebhookAction final : public HttpAction {
 public:
  WebhookAction(std::shared_ptr<ActionHub> hub, const AlertRule& rule)
      : HttpAction(std::move(hub), rule, "webhook", rule.actions.webhook) {}

  bool Deliver(const AlertNotice& notice) override {
    if (!UrlUsable()) return false;
    return Post(url_.path, NoticeJson(notice, hub().context()).dump());
  }
};

// Alertmanager's API v2: the alert's instances (one per GPU of a per-GPU rule)
// POSTed to /api/v2/alerts; firing ones re-sent every minute, valid for four
// (Alertmanager resolves an alert that is not re-sent before its endsAt).
class AlertmanagerAction final : public HttpAction {
 public:
  AlertmanagerAction(std::shared_ptr<ActionHub> hub, const AlertRule& rule)
      : HttpAction(std::move(hub), rule, "alertmanager", rule.actions.alertmanager) {
    while (url_.path.ends_with('/')) url_.path.pop_back();
    if (size_t q = url_.path.find('?'); q != std::string::npos) url_.path.resize(q);
    url_.path += "/api/v2/alerts";
  }

  bool Deliver(const AlertNotice& notice) override {
    if (!UrlUsable()) return false;
    nlohmann::json alerts = nlohmann::json::array();
    if (notice.state == AlertNotice::State::kResolved) {
      firing_.erase(notice.gpu);
      alerts.push_back(Alert(notice, notice.t));
    } else {
      bool known = firing_.contains(notice.gpu);
      if (firing_.empty()) last_sent_ = SteadyClock::now();
      firing_.insert_or_assign(notice.gpu, notice);
      if (known && notice.state == AlertNotice::State::kRepeat) return true;  // the resend has it
      alerts.push_back(Alert(notice, UnixNow() + kFiringValidS));
    }
    return Post(url_.path, alerts.dump());
  }

  std::optional<SteadyClock::time_point> NextWake() const override {
    if (firing_.empty()) return std::nullopt;
    return last_sent_ + kResendEvery;
  }

  void Wake() override {
    last_sent_ = SteadyClock::now();
    nlohmann::json alerts = nlohmann::json::array();
    double ends_at = UnixNow() + kFiringValidS;
    for (const auto& [gpu, notice] : firing_) alerts.push_back(Alert(notice, ends_at));
    Post(url_.path, alerts.dump());
  }

 private:
  nlohmann::json Alert(const AlertNotice& notice, double ends_at) const {
    const AlertContext& context = this->context();
    nlohmann::json labels = nlohmann::json::object();
    labels["alertname"] = rule().name;
    labels["severity"] = rule().severity;
    if (notice.gpu >= 0) labels["gpu"] = std::to_string(notice.gpu);
    if (!context.run.empty()) labels["run"] = context.run;
    if (!context.host.empty()) labels["host"] = context.host;
    for (const auto& [key, value] : rule().labels) {
      if (!labels.contains(key)) labels[key] = value;
    }
    nlohmann::json annotations = nlohmann::json::object();
    annotations["summary"] = notice.summary.empty() ? rule().expr.text : notice.summary;
    annotations["expr"] = rule().expr.text;
    if (notice.value) annotations["value"] = FormatValue(*notice.value);
    nlohmann::json alert;
    alert["labels"] = std::move(labels);
    alert["annotations"] = std::move(annotations);
    alert["startsAt"] = Rfc3339(notice.starts_at);
    alert["endsAt"] = Rfc3339(ends_at);
    return alert;
  }

  std::map<int, AlertNotice> firing_;  // by GPU (-1: the rule has none)
  SteadyClock::time_point last_sent_;
};

}  // namespace

std::unique_ptr<Action> MakeWebhookAction(std::shared_ptr<ActionHub> hub, const AlertRule& rule) {
  return std::make_unique<WebhookAction>(std::move(hub), rule);
}

std::unique_ptr<Action> MakeAlertmanagerAction(std::shared_ptr<ActionHub> hub,
                                               const AlertRule& rule) {
  return std::make_unique<AlertmanagerAction>(std::move(hub), rule);
}

}  // namespace alert_actions

}  // namespace tv
