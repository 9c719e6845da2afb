// The alert rules on the sampler thread: 50 rules (the 6 built-in ones and 44
// of every kind: per GPU and not, windows of time and of samples, ratios, `or`,
// findings) evaluated on one row with 8 GPUs. Target: at most 20 us a row.
// And what the sampler thread pays to hand a firing alert to its actions
// while the webhook's server never answers: Notify only queues.
#include <arpa/inet.h>
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "actions/actions.h"
#include "analysis/alerts/observer.h"
#include "analysis/alerts/rules_file.h"
#include "training_row.h"

namespace tv {
namespace {

std::shared_ptr<const std::vector<AlertRule>> FiftyRules() {
  std::vector<AlertRule> rules = *LoadAlertRules(Config());
  const char* kinds[] = {
      "mean(gpus[].util_ratio[10m]) < 20%",
      "max(gpus[].util_ratio[5 samples]) < 20%",
      "gpus[].memory_used_bytes / gpus[].memory_total_bytes > 95%",
      "(gpus[].allocator_reserved_bytes or gpus[].memory_used_bytes) > 70GiB",
      "min(gpus[].power_watts[1m]) > 600",
      "job.memory_util_ratio > 90%",
      "mean(training.data_wait_ratio[5m]) > 30%",
      "training.steps_per_second < 1",
      "max(host.cpu_util_ratio[30 samples]) > 95%",
      "finding oom-forecast",
      "gpus[].temperature_celsius_max > 90",
  };
  for (int i = 0; static_cast<int>(rules.size()) < 50; ++i) {
    AlertRule r;
    r.name = fmt::format("rule-{}", i);
    std::string_view kind = kinds[i % std::size(kinds)];
    if (kind.starts_with("finding ")) {
      r.expr.finding = std::string(kind.substr(8));
    } else {
      r.expr = ParseAlertExpr(kind);
    }
    r.for_s = 60;
    rules.push_back(std::move(r));
  }
  return std::make_shared<const std::vector<AlertRule>>(std::move(rules));
}

void BM_AlertRulesRow(benchmark::State& state) {
  AlertsObserver observer(FiftyRules(), 1);
  std::vector<Event> events;
  Row row = TrainingRow(8, kStart);
  double t = kStart;
  // Past every window, as a long run is.
  for (int i = 0; i < 700; ++i) {
    row.t = ++t;
    observer.OnRow(&row, &events);
  }
  for (auto _ : state) {
    row.t = ++t;
    observer.OnRow(&row, &events);
    events.clear();
  }
  state.counters["rules"] = 50;
}
BENCHMARK(BM_AlertRulesRow);

// A socket on 127.0.0.1 that listens and never accepts: the client connects
// (the kernel completes it), sends, and waits for an answer that never comes.
struct SilentServer {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  int port = 0;
  SilentServer() {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || listen(fd, 16) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      return;
    }
    port = ntohs(addr.sin_port);
  }
  ~SilentServer() { close(fd); }
};

void BM_AlertNotifyHungWebhook(benchmark::State& state) {
  SilentServer server;
  if (server.port == 0) {
    state.SkipWithError("cannot listen on 127.0.0.1");
    return;
  }
  AlertRule rule;
  rule.name = "gpu-low-util";
  rule.expr = ParseAlertExpr("gpus[].util_ratio < 20%");
  rule.actions.webhook = fmt::format("http://127.0.0.1:{}/hook", server.port);
  auto rules = std::make_shared<const std::vector<AlertRule>>(std::vector<AlertRule>{rule});
  AlertActions actions(rules, AlertContext{"bench", "host", "", 0}, [](Event) {});
  actions.Start();
  AlertNotice notice;
  notice.state = AlertNotice::State::kRepeat;
  notice.rule = &(*rules)[0];
  notice.gpu = 0;
  notice.value = 0.05;
  notice.summary = "GPU 0 under 20 %";
  for (auto _ : state) {
    notice.t += 1;
    actions.Notify(notice);
  }
  actions.Finish(0);
}
BENCHMARK(BM_AlertNotifyHungWebhook);

}  // namespace
}  // namespace tv
