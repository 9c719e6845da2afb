#include "views/cost_lines.h"

#include <gtest/gtest.h>

namespace tv::cost_lines_test {
namespace {

using Json = nlohmann::ordered_json;

// The lines of a cost as summary.json holds it.
std::string Said(const Json& cost) {
  CostRecord record;
  EXPECT_TRUE(CostFromJson(cost, &record).ok());
  return FormatCost(record);
}

CostForecast ForecastOf(const Json& forecast) {
  CostForecast f;
  EXPECT_TRUE(ForecastFromJson(forecast, &f).ok());
  return f;
}

TEST(CostLines, SayHeldBusyLostEnergyMoneyAndTheForecast) {
  Json cost = {
      {"gpus_used", 2},
      {"gpu_hours", 4.0},
      {"busy_gpu_hours", 2.0},
      {"busy_basis", "util_ratio"},
      {"busy_ratio", 0.5},
      {"lost", {{"startup_ratio", 0.05}, {"data_wait_ratio", 0.125}, {"evaluation_ratio", 0.001}}},
      {"gpu_energy_kwh", 2.4},
      {"cpu_energy_kwh", 0.6},
      {"pue", 1.5},
      {"energy_kwh", 4.5},
      {"grid_g_per_kwh", 100},
      {"co2e_kg", 0.45},
      {"currency", "EUR"},
      {"money", 10.9},
      {"money_gpu_hours", 10.0},
      {"money_energy", 0.9},
      {"forecast",
       {{"planned_epochs", 4},
        {"epochs_done", 1},
        {"duration_s", 18000},
        {"energy_kwh", 7.2},
        {"money", 3.6}}}};
  EXPECT_EQ(
      Said(cost),
      "  Cost     2 GPUs held 4.00 GPU-h, busy 2.00 GPU-h (50%); of the held time 5% start-up, "
      "12% waiting for input\n"
      "  Cost     4.50 kWh (GPUs 2.40 kWh, CPU 600.0 Wh, x PUE 1.5), 450.0 g CO2e "
      "(estimate at 100 g/kWh)\n"
      "  Cost     10.90 EUR (GPU-hours 10.00 EUR, energy 0.90 EUR)\n"
      "  Forecast all 4 epochs would have taken 5:00:00, 7.20 kWh, 3.60 EUR (stopped after "
      "1)\n");
  EXPECT_EQ(FormatForecastLine(ForecastOf(cost["forecast"]), "EUR"),
            "trainvitals: forecast for all 4 epochs (after 1): 5:00:00 in all, 7.20 kWh, 3.60 EUR");
  EXPECT_EQ(Said(Json()), "");
}

TEST(CostLines, SmallFiguresKeepTheirDigits) {
  EXPECT_EQ(FormatGpuHours(0.001), "3.6 GPU-s");
  EXPECT_EQ(FormatGpuHours(0.5), "30.0 GPU-min");
  EXPECT_EQ(FormatKwh(0.0002), "0.20 Wh");
  EXPECT_EQ(FormatKg(0.0001), "0.10 g");
  EXPECT_EQ(FormatMoney(0.0017, "USD"), "0.0017 USD");
  EXPECT_EQ(FormatMoney(0, "USD"), "0.00 USD");
}

}  // namespace
}  // namespace tv::cost_lines_test
