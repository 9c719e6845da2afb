// The alert rules on the sampler thread: 50 rules (the 6 built-in ones and 44
// of every kind: per GPU and not, windows of time and of samples, ratios, `or`,
// findings) evaluated on one row with 8 GPUs. Target: at most 20 us a row.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

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

}  // namespace
}  // namespace tv
