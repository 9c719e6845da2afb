// The cost in words: the summary's "Cost" lines and the live forecast line,
// from the cost the cost accounting writes (store/cost_record.h).
#pragma once

#include <string>

#include "store/cost_record.h"

namespace tv {

// "1.20 GPU-h", "3.8 GPU-min", "9.5 GPU-s"; "4.20 kWh", "310.0 Wh"; "1.90 kg",
// "140.0 g"; "12.40 USD" (4 decimals under 0.01).
std::string FormatGpuHours(double hours);
std::string FormatKwh(double kwh);
std::string FormatKg(double kg);
std::string FormatMoney(double amount, const std::string& currency);

// The summary's cost lines (each ends with a newline); "" for a cost that
// says nothing.
std::string FormatCost(const CostRecord& cost);

// "trainvitals: forecast for all 10 epochs: 2:10:00 in all, 4.1 kWh, ..." from
// a forecast, its money in `currency` (no newline).
std::string FormatForecastLine(const CostForecast& forecast, const std::string& currency);

}  // namespace tv
