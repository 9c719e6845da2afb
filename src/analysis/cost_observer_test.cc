// The run-level figures each row carries are summary.json's at the run's end:
// rows and the run's own row from the same samples, the summary built from
// the run's row, its cost by BuildCost.
#include "analysis/cost_observer.h"

#include <gtest/gtest.h>

#include "core/aggregator.h"
#include "views/summary.h"

namespace tv::cost_observer_test {
namespace {

CostRates Rates() {
  CostRates r;
  r.pue = 1.2;
  r.kwh_price = 0.30;
  r.currency = "EUR";
  r.gpu_hour_price = {{"h100", 2.5}, {"default", 1.0}};
  return r;
}

std::vector<GpuInfo> Meta() {
  std::vector<GpuInfo> gpus(2);
  gpus[0].name = "NVIDIA H100 80GB HBM3";
  gpus[1].index = 1;
  gpus[1].name = "A10";
  return gpus;
}

// Tick `i` (10 Hz) of a run on two GPUs: GPU 0 the job's, its load changing;
// GPU 1 another job's, busier and hungrier.
Sample Tick(int i) {
  Sample s;
  s.t = 1000 + i * 0.1;
  s.mono_s = i * 0.1;
  s.host.cpu_energy_joules = 50.0 * i * 0.1;
  GpuSample& job = s.gpus.emplace_back();
  job.index = 0;
  job.util_ratio = i % 3 == 0 ? 0.2 : 0.5;
  job.energy_joules = 250.0 * i * 0.1;
  job.job_processes = 1;
  job.job_memory_bytes = 5e9;
  GpuSample& other = s.gpus.emplace_back();
  other.index = 1;
  other.physical_index = 1;
  other.util_ratio = 0.9;
  other.energy_joules = 400.0 * i * 0.1;
  other.job_processes = 0;
  other.job_memory_bytes = 0;
  return s;
}

TEST(CostForecaster, EachRowCarriesTheRunSoFarAndTheLastRowIsTheSummarysCost) {
  CostForecaster costs(Rates(), Meta());
  Aggregator interval, run;
  Row last;
  std::vector<Event> events;
  for (int i = 1; i <= 47; ++i) {  // rows of 5 ticks, the last one of 2
    Sample s = Tick(i);
    interval.Add(s);
    run.Add(s);
    if (i % 5 == 0 || i == 47) {
      last = interval.Take(s.t, s.mono_s);
      costs.OnRow(&last, &events);
      ASSERT_EQ(last.run_gpus_used, 1);
      ASSERT_TRUE(last.run_gpu_busy_ratio);
      EXPECT_LT(*last.run_gpu_busy_ratio, 0.6) << "GPU 1's 90 % never enters";
    }
  }
  EXPECT_TRUE(events.empty());

  RunOutcome outcome;
  outcome.start_t = 1000;
  outcome.end_t = 1000 + last.elapsed_s;
  RunSummary summary = SummaryOf(outcome, run.Peek(last.t, last.elapsed_s));
  nlohmann::ordered_json cost = ToJson(BuildCost(summary, Meta(), Rates()).value());
  ASSERT_EQ(cost["gpus_used"], 1);
  EXPECT_NEAR(*last.run_gpu_busy_ratio, cost["busy_ratio"].get<double>(), 5e-5);
  EXPECT_NEAR(*last.run_gpu_busy_ratio, (15 * 0.2 + 32 * 0.5) / 47,
              1e-12);  // ticks 3, 6, .. 45 at 0.2
  EXPECT_NEAR(*last.run_gpu_energy_joules / 3.6e6, cost["gpu_energy_kwh"].get<double>(), 1e-9);
  EXPECT_DOUBLE_EQ(*last.run_gpu_energy_joules, 250.0 * 4.7);
  ASSERT_TRUE(last.run_money);
  EXPECT_NEAR(*last.run_money, cost["money"].get<double>(), 1e-5 * *last.run_money);
  EXPECT_EQ(last.run_currency, "EUR");
  // By hand: 4.7 s of one H100 at 2.5 an hour, and (GPU 0 + CPU) x PUE at 0.30 a kWh.
  double kwh = (250.0 * 4.7 + 50.0 * 4.7) / 3.6e6 * 1.2;
  EXPECT_NEAR(*last.run_money, 2.5 * 4.7 / 3600 + kwh * 0.30, 1e-12);
}

TEST(CostForecaster, NoPricesNoMoneyAndNoGpusNoBusyShare) {
  CostForecaster costs(CostRates(), {});
  Aggregator interval;
  Sample s;
  s.t = 1000;
  s.host.cpu_energy_joules = 10;
  interval.Add(s);
  Row row = interval.Take(1001, 1);
  std::vector<Event> events;
  costs.OnRow(&row, &events);
  EXPECT_EQ(row.run_gpus_used, 0);
  EXPECT_FALSE(row.run_gpu_busy_ratio);
  EXPECT_FALSE(row.run_gpu_energy_joules);
  EXPECT_FALSE(row.run_money);
  EXPECT_EQ(row.run_currency, "");
}

}  // namespace
}  // namespace tv::cost_observer_test
