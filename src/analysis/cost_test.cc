// Cost accounting on hand-made summaries whose figures are computed by hand.
#include "analysis/cost.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/config.h"
#include "store/summary_fixture.h"

namespace tv::cost_test {
namespace {

using Json = nlohmann::ordered_json;

// A TOML file of the test's own, removed at the end.
struct TomlFile {
  std::string path =
      (std::filesystem::temp_directory_path() / ("tv-cost-" + std::to_string(::getpid()) + ".toml"))
          .string();
  explicit TomlFile(const std::string& text) { std::ofstream(path) << text; }
  ~TomlFile() { std::filesystem::remove(path); }
};

// Two hours on two GPUs of a four-GPU node: the job's at 60 % and 40 %
// busy, 1.5 kWh and 0.9 kWh; the CPU packages 0.6 kWh.
Json TwoHourSummary() {
  auto gpu = [](int index, double util, double joules, int procs) {
    return Json{{"index", index},
                {"util_ratio", {{"mean", util}, {"max", 1.0}}},
                {"job_processes", {{"mean", procs}, {"max", procs}}},
                {"job_memory_bytes", {{"mean", procs * 1e9}, {"max", procs * 1e9}}},
                {"energy_joules", joules}};
  };
  return Json{{"duration_s", 7200},
              {"host", {{"cpu_energy_joules", 0.6 * 3.6e6}}},
              {"gpus",
               {gpu(0, 0.6, 1.5 * 3.6e6, 1), gpu(1, 0.4, 0.9 * 3.6e6, 1),
                gpu(2, 0.0, 0.2 * 3.6e6, 0), gpu(3, 0.9, 1.0 * 3.6e6, 0)}},
              {"epochs",
               {{{"epoch", 0},
                 {"duration_s", 3600},
                 {"call", 1},
                 {"planned_epochs", 4},
                 {"data_wait_ratio", 0.25},
                 {"cpu_energy_joules", 0.3 * 3.6e6},
                 {"gpus",
                  {{{"index", 0}, {"util_ratio_mean", 0.5}, {"energy_joules", 0.7 * 3.6e6}},
                   {{"index", 1}, {"util_ratio_mean", 0.3}, {"energy_joules", 0.4 * 3.6e6}},
                   {{"index", 3}, {"util_ratio_mean", 0.9}, {"energy_joules", 0.5 * 3.6e6}}}}}}},
              {"phases",
               {{"train", {{"duration_s", 6000}, {"share", 0.8333}}},
                {"eval", {{"duration_s", 1200}, {"share", 0.1667}}}}},
              {"health",
               {{"goodput",
                 {{"ratios",
                   {{"productive", 0.6583},
                    {"startup", 0.05},
                    {"data_wait", 0.125},
                    {"evaluation", 0.1667},
                    {"stalled", 0}}}}}}}};
}

// The cost of `summary` as summary.json holds it; null when there is none.
Json CostJson(const Json& summary, const std::vector<GpuInfo>& gpus, const CostRates& rates) {
  std::optional<CostRecord> cost = BuildCost(SummaryOfJson(summary), gpus, rates);
  return cost ? ToJson(*cost) : Json();
}

std::vector<GpuInfo> Meta() {
  std::vector<GpuInfo> gpus(4);
  for (int i = 0; i < 4; ++i) {
    gpus[i].index = i;
    gpus[i].name = "NVIDIA H100 80GB HBM3";
  }
  return gpus;
}

TEST(Cost, GpuHoursEnergyAndCo2eOfTheJobsGpus) {
  Json c = CostJson(TwoHourSummary(), Meta(), CostRates());
  EXPECT_EQ(c["gpus_used"], 2);
  EXPECT_DOUBLE_EQ(c["gpu_hours"].get<double>(), 4.0);         // 2 h x 2 GPUs
  EXPECT_DOUBLE_EQ(c["busy_gpu_hours"].get<double>(), 2.0);    // 2 h x (0.6 + 0.4)
  EXPECT_DOUBLE_EQ(c["wasted_gpu_hours"].get<double>(), 2.0);  // held - busy
  EXPECT_DOUBLE_EQ(c["busy_ratio"].get<double>(), 0.5);
  EXPECT_EQ(c["busy_basis"], "util_ratio");
  // Where the run's time went (health.goodput), shares that do not overlap.
  EXPECT_DOUBLE_EQ(c["lost"]["startup_ratio"].get<double>(), 0.05);
  EXPECT_DOUBLE_EQ(c["lost"]["data_wait_ratio"].get<double>(), 0.125);
  EXPECT_DOUBLE_EQ(c["lost"]["evaluation_ratio"].get<double>(), 0.1667);
  EXPECT_FALSE(c["lost"].contains("stalled_ratio"));         // none
  EXPECT_FALSE(c["lost"].contains("idle_ratio"));            // the busy share says it
  EXPECT_DOUBLE_EQ(c["gpu_energy_kwh"].get<double>(), 2.4);  // GPUs 0 and 1 only
  EXPECT_DOUBLE_EQ(c["cpu_energy_kwh"].get<double>(), 0.6);
  EXPECT_DOUBLE_EQ(c["energy_kwh"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(c["co2e_kg"].get<double>(), 1.425);  // 3 kWh x 475 g
  EXPECT_EQ(c["co2e_estimate"], true);
  // No price given: no money said.
  EXPECT_FALSE(c.contains("money"));
  EXPECT_FALSE(c.contains("currency"));
}

TEST(Cost, MoneyFromTheRatesPueAndGridIntensity) {
  CostRates rates;
  rates.pue = 1.5;
  rates.grid_g_per_kwh = 100;
  rates.kwh_price = 0.2;
  rates.currency = "EUR";
  rates.gpu_hour_price = {{"h100", 2.5}, {"default", 1.0}, {"A100", 1.8}};
  Json c = CostJson(TwoHourSummary(), Meta(), rates);
  EXPECT_DOUBLE_EQ(c["energy_kwh"].get<double>(), 4.5);  // 3 kWh x 1.5
  EXPECT_DOUBLE_EQ(c["co2e_kg"].get<double>(), 0.45);
  EXPECT_DOUBLE_EQ(c["money_gpu_hours"].get<double>(), 10.0);  // 4 GPU-h x 2.5 (H100, any case)
  EXPECT_DOUBLE_EQ(c["money_energy"].get<double>(), 0.9);      // 4.5 kWh x 0.2
  EXPECT_DOUBLE_EQ(c["money"].get<double>(), 10.9);
  EXPECT_EQ(c["currency"], "EUR");
}

TEST(Cost, AModelWithoutAPriceSaysNoGpuMoney) {
  CostRates rates;
  rates.gpu_hour_price = {{"A100", 1.8}};
  Json c = CostJson(TwoHourSummary(), Meta(), rates);
  EXPECT_FALSE(c.contains("money"));  // an H100 has no price and there is no default
  EXPECT_EQ(c["unpriced_models"], Json::array({"NVIDIA H100 80GB HBM3"}));
  rates.kwh_price = 0.1;  // the energy is priced, the GPU-hours still are not
  c = CostJson(TwoHourSummary(), Meta(), rates);
  EXPECT_DOUBLE_EQ(c["money"].get<double>(), 0.3);
  EXPECT_FALSE(c.contains("money_gpu_hours"));
  EXPECT_EQ(c["unpriced_models"], Json::array({"NVIDIA H100 80GB HBM3"}));
  EXPECT_FALSE(CostJson(TwoHourSummary(), Meta(), CostRates()).contains("unpriced_models"));
}

TEST(Cost, SmActivityIsTheBusyBasisWhereEveryUsedGpuMeasuredIt) {
  Json s = TwoHourSummary();
  s["gpus"][0]["sm_active_ratio"] = {{"mean", 0.3}, {"max", 0.9}};
  EXPECT_EQ(CostJson(s, Meta(), CostRates())["busy_basis"], "util_ratio");  // GPU 1 has none
  s["gpus"][1]["sm_active_ratio"] = {{"mean", 0.2}, {"max", 0.9}};
  Json c = CostJson(s, Meta(), CostRates());
  EXPECT_EQ(c["busy_basis"], "sm_active_ratio");
  EXPECT_DOUBLE_EQ(c["busy_gpu_hours"].get<double>(), 1.0);  // 2 h x (0.3 + 0.2)
}

TEST(Cost, EveryWatchedGpuCountsWhereTheDriverListsNoProcesses) {
  Json s = TwoHourSummary();
  for (Json& g : s["gpus"]) g.erase("job_processes"), g.erase("job_memory_bytes");
  Json c = CostJson(s, Meta(), CostRates());
  EXPECT_EQ(c["gpus_used"], 4);
  EXPECT_DOUBLE_EQ(c["gpu_hours"].get<double>(), 8.0);
}

TEST(Cost, AHostWithoutGpusHoldsNoGpuHours) {
  Json s = {{"duration_s", 60}, {"gpus", Json::array()}};
  Json c = CostJson(s, {}, CostRates());
  EXPECT_EQ(c["gpus_used"], 0);
  EXPECT_DOUBLE_EQ(c["gpu_hours"].get<double>(), 0.0);
  EXPECT_FALSE(c.contains("energy_kwh"));  // nothing measured: nothing said
  EXPECT_TRUE(CostJson(Json::object(), {}, CostRates()).is_null());
}

TEST(Cost, EpochsAndPhasesAreCostedOnTheJobsGpus) {
  CostRates rates;
  rates.gpu_hour_price = {{"default", 2.0}};
  Json c = CostJson(TwoHourSummary(), Meta(), rates);
  const Json& e = c["epochs"][0];
  EXPECT_DOUBLE_EQ(e["gpu_hours"].get<double>(), 2.0);       // 1 h x 2 GPUs
  EXPECT_DOUBLE_EQ(e["busy_gpu_hours"].get<double>(), 0.8);  // 1 h x (0.5 + 0.3)
  EXPECT_DOUBLE_EQ(e["energy_kwh"].get<double>(), 1.4);      // 0.7 + 0.4 + CPU 0.3
  EXPECT_DOUBLE_EQ(e["money"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(c["phases"]["eval"]["gpu_hours"].get<double>(), 0.666667);  // 6 digits
  EXPECT_DOUBLE_EQ(c["phases"]["train"]["share"].get<double>(), 0.8333);
}

TEST(Cost, ForecastsTheWholeRunFromItsCompleteEpochs) {
  CostRates rates;
  rates.kwh_price = 0.5;
  Json c = CostJson(TwoHourSummary(), Meta(), rates);
  // 1 of 4 epochs done in a 2 h run: 3 more of 1 h and 1.4 kWh each.
  const Json& f = c["forecast"];
  EXPECT_EQ(f["planned_epochs"], 4);
  EXPECT_EQ(f["epochs_done"], 1);
  EXPECT_DOUBLE_EQ(f["duration_s"].get<double>(), 7200 + 3 * 3600);
  EXPECT_DOUBLE_EQ(f["energy_kwh"].get<double>(), 3.0 + 3 * 1.4);
  EXPECT_DOUBLE_EQ(f["money"].get<double>(), (3.0 + 3 * 1.4) * 0.5);
}

TEST(Cost, NoForecastWhenEveryPlannedEpochRanOrNoneIsComplete) {
  Json s = TwoHourSummary();
  s["epochs"][0]["planned_epochs"] = 1;
  EXPECT_FALSE(CostJson(s, Meta(), CostRates()).contains("forecast"));
  s["epochs"][0]["planned_epochs"] = 4;
  s["epochs"][0]["complete"] = false;
  EXPECT_FALSE(CostJson(s, Meta(), CostRates()).contains("forecast"));
  s["epochs"][0].erase("planned_epochs");
  s["epochs"][0].erase("complete");
  EXPECT_FALSE(CostJson(s, Meta(), CostRates()).contains("forecast"));
}

TEST(CostRates, ReadsTheCostTable) {
  TomlFile file(
      "interval = 2\n[cost]\npue = 1.3\ngrid_g_per_kwh = 56\nkwh_price = 0.25\n"
      "currency = \"EUR\"\ngpu_hour_price = { H100 = 2.49, default = 1 }\n");
  const std::string& path = file.path;
  CostRates r = LoadCostRates(path);
  EXPECT_DOUBLE_EQ(r.pue, 1.3);
  EXPECT_DOUBLE_EQ(r.grid_g_per_kwh, 56);
  EXPECT_DOUBLE_EQ(*r.kwh_price, 0.25);
  EXPECT_EQ(r.currency, "EUR");
  EXPECT_DOUBLE_EQ(r.gpu_hour_price.at("H100"), 2.49);
  EXPECT_DOUBLE_EQ(r.gpu_hour_price.at("default"), 1);
  Config config;
  ApplyConfigFile(path, config);  // the config file takes its [cost] table
  EXPECT_EQ(config.cost_file, path);
  EXPECT_DOUBLE_EQ(LoadCostRates("").pue, 1.0);
  EXPECT_DOUBLE_EQ(LoadCostRates("").grid_g_per_kwh, 475);
}

TEST(CostRates, EveryWrongRateSaysFileLineAndWhat) {
  auto error = [](const std::string& text) {
    TomlFile file(text);
    try {
      LoadCostRates(file.path);
    } catch (const ConfigError& e) {
      return std::string(e.what()).substr(file.path.size());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("[cost]\npue = 0.5\n"),
            ":2: cost.pue: 0.5 is out of range: expected the site's power usage effectiveness, "
            "1 to 5");
  EXPECT_EQ(error("[cost]\nkwh_prize = 1\n"),
            ":2: cost.kwh_prize: unknown key (did you mean 'kwh_price'?)");
  EXPECT_EQ(error("[cost]\nkwh_price = \"cheap\"\n"),
            ":2: cost.kwh_price: expected a price per kWh, at least 0");
  EXPECT_EQ(error("[cost]\ngpu_hour_price = 2\n"),
            ":2: cost.gpu_hour_price: expected a table of GPU model = price per GPU-hour "
            "({ H100 = 2.5, default = 1 })");
  EXPECT_EQ(error("[cost]\ngpu_hour_price = { H100 = -1 }\n"),
            ":2: cost.gpu_hour_price.H100: -1 is out of range: expected a price per GPU-hour, at "
            "least 0");
  EXPECT_EQ(error("cost = 3\n"), ":1: cost: expected a [cost] table (docs/cost.md)");
}

}  // namespace
}  // namespace tv::cost_test
