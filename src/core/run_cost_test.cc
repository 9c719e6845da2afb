// The run-level figures over the GPUs a job used, computed by hand.
#include "core/run_cost.h"

#include <gtest/gtest.h>

namespace tv::run_cost_test {
namespace {

GpuUse Gpu(int index, double processes, double memory, std::optional<double> util,
           std::optional<double> joules) {
  GpuUse g;
  g.index = index;
  g.processes_listed = true;
  g.job_processes_max = processes;
  g.job_memory_bytes_max = memory;
  g.util_ratio_mean = util;
  g.energy_joules = joules;
  return g;
}

CostRates Priced() {
  CostRates r;
  r.pue = 1.2;
  r.kwh_price = 0.30;
  r.currency = "EUR";
  r.gpu_hour_price = {{"h100", 2.5}, {"default", 1.0}};
  return r;
}

TEST(RunCost, OnlyTheGpusTheJobUsedCount) {
  // GPU 1 is another job's, busier and hungrier: it must not enter any figure.
  std::vector<GpuUse> gpus = {Gpu(0, 1, 5e9, 0.4, 900e3), Gpu(1, 0, 0, 0.9, 1440e3)};
  for (GpuUse& g : gpus) g.gpu_hour_price = 2.5;
  RunCost c = ComputeRunCost(gpus, 360e3, 3600, Priced());
  ASSERT_EQ(c.used.size(), 1u);
  EXPECT_EQ(c.used[0]->index, 0);
  ASSERT_TRUE(c.busy);
  EXPECT_EQ(c.busy->basis, BusyBasis::kUtil);
  EXPECT_DOUBLE_EQ(c.busy->ratio, 0.4);
  EXPECT_DOUBLE_EQ(*c.gpu_energy_joules, 900e3);
  EXPECT_DOUBLE_EQ(*c.energy_kwh, (900e3 + 360e3) / 3.6e6 * 1.2);  // 0.42 kWh
  EXPECT_DOUBLE_EQ(*c.money.gpu_hours, 2.5);                       // one GPU, one hour
  EXPECT_DOUBLE_EQ(*c.money.energy, 0.42 * 0.30);
  EXPECT_DOUBLE_EQ(*c.money.Total(), 2.5 + 0.126);
  EXPECT_EQ(c.currency, "EUR");
}

TEST(RunCost, MemoryAloneMarksAGpuUsedAndNoProcessListMeansEveryGpu) {
  std::vector<GpuUse> gpus = {Gpu(0, 0, 1e9, 0.2, std::nullopt), Gpu(1, 0, 0, 0.8, std::nullopt)};
  EXPECT_EQ(JobUsedGpus(gpus), (std::vector<bool>{true, false}));
  for (GpuUse& g : gpus) g.processes_listed = false;  // a container: the driver lists none
  EXPECT_EQ(JobUsedGpus(gpus), (std::vector<bool>{true, true}));
}

TEST(RunCost, SmActiveWhereEveryUsedGpuMeasuredItElseUtil) {
  GpuUse a = Gpu(0, 1, 0, 0.9, std::nullopt), b = Gpu(1, 1, 0, 0.7, std::nullopt);
  a.sm_active_ratio_mean = 0.5;
  std::vector<const GpuUse*> used = {&a, &b};
  std::optional<BusyShare> busy = BusyShareOf(used);
  ASSERT_TRUE(busy);
  EXPECT_EQ(BusyBasisName(busy->basis), "util_ratio");  // b lacks GPM
  EXPECT_DOUBLE_EQ(busy->ratio, 0.8);
  b.sm_active_ratio_mean = 0.3;
  busy = BusyShareOf(used);
  EXPECT_EQ(BusyBasisName(busy->basis), "sm_active_ratio");
  EXPECT_DOUBLE_EQ(busy->ratio, 0.4);
  EXPECT_DOUBLE_EQ(*BusyShareOn(used, BusyBasis::kUtil), 0.8);
  b.util_ratio_mean.reset();
  EXPECT_FALSE(BusyShareOn(used, BusyBasis::kUtil));
  EXPECT_FALSE(BusyShareOf(std::vector<const GpuUse*>{}));
}

TEST(RunCost, NoMoneyWithoutAPriceForEveryPart) {
  GpuUse g = Gpu(0, 1, 0, 0.5, 3.6e6);  // 1 kWh
  std::vector<const GpuUse*> used = {&g};
  CostRates rates = Priced();
  // A GPU-hour price list that misses the model: no GPU-hour money, the energy's only.
  MoneyParts m = PriceSpan(rates, used, 2, 1.2);
  EXPECT_FALSE(m.gpu_hours);
  EXPECT_DOUBLE_EQ(*m.Total(), 1.2 * 0.30);
  CostRates none;
  EXPECT_FALSE(PriceSpan(none, used, 2, 1.2).Total());
  RunCost c = ComputeRunCost(std::vector<GpuUse>{g}, std::nullopt, 7200, none);
  EXPECT_FALSE(c.money.Total());
  EXPECT_EQ(c.currency, "") << "no prices, no currency";
  EXPECT_DOUBLE_EQ(*c.energy_kwh, 1.0);
}

TEST(RunCost, TheLongestModelKeyWinsElseDefault) {
  CostRates r;
  r.gpu_hour_price = {{"H100", 2.5}, {"h100 80gb", 3.0}, {"default", 1.0}};
  EXPECT_EQ(GpuHourPrice(r, "NVIDIA H100 80GB HBM3"), 3.0);
  EXPECT_EQ(GpuHourPrice(r, "NVIDIA H100 PCIe"), 2.5);
  EXPECT_EQ(GpuHourPrice(r, "NVIDIA A10"), 1.0);
  r.gpu_hour_price.erase("default");
  EXPECT_FALSE(GpuHourPrice(r, "NVIDIA A10"));
  EXPECT_FALSE(HasPrices(CostRates()));
}

}  // namespace
}  // namespace tv::run_cost_test
