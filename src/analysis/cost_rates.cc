// The [cost] table of the config file (docs/cost.md).
#include <fmt/format.h>
#include <toml++/toml.h>

#include "analysis/cost.h"
#include "core/config.h"
#include "core/near.h"

namespace tv {
namespace {

constexpr std::string_view kRateKeys[] = {"pue", "grid_g_per_kwh", "kwh_price", "currency",
                                          "gpu_hour_price"};

int Line(const toml::node& node) { return static_cast<int>(node.source().begin.line); }

// The number at `node`, within [low, high]; else a ConfigError at `where`.
double Read(const toml::node& node, const std::string& where, double low, double high,
            std::string_view what) {
  std::optional<double> v = node.value<double>();
  if (!v || node.is_boolean()) throw ConfigError(fmt::format("{}: expected {}", where, what));
  if (*v < low || *v > high) {
    throw ConfigError(fmt::format("{}: {} is out of range: expected {}", where, *v, what));
  }
  return *v;
}

}  // namespace

CostRates LoadCostRates(const std::string& path) {
  CostRates rates;
  if (path.empty()) return rates;
  toml::table file;
  try {
    file = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    throw ConfigError(fmt::format("{}:{}:{}: {}", path, e.source().begin.line,
                                  e.source().begin.column, e.description()));
  }
  const toml::table* cost = file["cost"].as_table();
  if (cost == nullptr) {
    if (file.contains("cost")) {
      throw ConfigError(fmt::format("{}:{}: cost: expected a [cost] table (docs/cost.md)", path,
                                    Line(*file.get("cost"))));
    }
    return rates;
  }
  for (const auto& [key, node] : *cost) {
    std::string where = fmt::format("{}:{}: cost.{}", path, Line(node), key.str());
    if (key == "pue") {
      rates.pue = Read(node, where, 1, 5, "the site's power usage effectiveness, 1 to 5");
    } else if (key == "grid_g_per_kwh") {
      rates.grid_g_per_kwh = Read(node, where, 0, 5000, "grams of CO2e per kWh, 0 to 5000");
    } else if (key == "kwh_price") {
      rates.kwh_price = Read(node, where, 0, 1e6, "a price per kWh, at least 0");
    } else if (key == "currency") {
      std::optional<std::string> text = node.value<std::string>();
      if (!text || text->empty() || text->size() > 8) {
        throw ConfigError(
            fmt::format("{}: expected a short currency name (\"USD\", \"EUR\")", where));
      }
      rates.currency = *text;
    } else if (key == "gpu_hour_price") {
      const toml::table* prices = node.as_table();
      if (prices == nullptr) {
        throw ConfigError(
            fmt::format("{}: expected a table of GPU model = price per GPU-hour ({{ H100 = 2.5, "
                        "default = 1 }})",
                        where));
      }
      for (const auto& [model, price] : *prices) {
        rates.gpu_hour_price[std::string(model.str())] = Read(
            price, fmt::format("{}:{}: cost.gpu_hour_price.{}", path, Line(price), model.str()), 0,
            1e6, "a price per GPU-hour, at least 0");
      }
    } else {
      std::string_view near = NearestWord(key.str(), kRateKeys);
      throw ConfigError(
          fmt::format("{}: unknown key{}", where,
                      near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near)));
    }
  }
  return rates;
}

}  // namespace tv
