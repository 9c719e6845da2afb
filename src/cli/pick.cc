// trainvitals pick [N] [--min-free-memory SIZE] [--max-util R] [--window S]
// [--json]: the N freest GPUs, as the environment a job should be started with.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "analysis/gpu_pick.h"
#include "cli/commands.h"
#include "cli/json_out.h"
#include "core/config.h"
#include "run/gpu_claim.h"
#include "sources/gpu_survey.h"

namespace tv {
namespace {

// "20%" or "0.2": a share of 0..1.
double ParseShare(const std::string& text) {
  std::string t = text;
  double scale = 1;
  if (!t.empty() && t.back() == '%') t.pop_back(), scale = 0.01;
  try {
    size_t used = 0;
    double v = std::stod(t, &used) * scale;
    if (used == t.size() && v >= 0 && v <= 1) return v;
  } catch (const std::exception&) {
  }
  throw ConfigError(fmt::format("--max-util {}: expected a share such as 20% or 0.2", text));
}

nlohmann::ordered_json AsJson(const GpuCandidate& c) {
  nlohmann::ordered_json j = {{"index", c.index}, {"uuid", c.uuid}, {"name", c.name}};
  if (c.mig_instance >= 0) j["mig_instance"] = c.mig_instance;
  j["memory_free_bytes"] =
      c.memory_free_bytes ? nlohmann::ordered_json(*c.memory_free_bytes) : nlohmann::ordered_json();
  j["busy_ratio"] = c.busy_ratio ? nlohmann::ordered_json(*c.busy_ratio) : nlohmann::ordered_json();
  j["processes"] = c.processes;
  if (c.held_by) {
    j["held_by"] = *c.held_by;
    j["held_by_pid"] =
        c.held_by_pid ? nlohmann::ordered_json(*c.held_by_pid) : nlohmann::ordered_json();
  }
  return j;
}

}  // namespace

void AddPickCommand(CLI::App& app, Action* action) {
  auto* cmd = app.add_subcommand(
      "pick",
      "Print the N freest GPUs (free memory share times idle share over the driver's recent "
      "history) as "
      "CUDA_VISIBLE_DEVICES=..., e.g. `env $(trainvitals pick 2) python train.py`; exit code 1 "
      "with the reasons when fewer than N qualify.");
  auto count = std::make_shared<int>(1);
  auto min_free = std::make_shared<uint64_t>(0);
  auto max_util = std::make_shared<std::string>("100%");
  auto window = std::make_shared<double>(10.0);
  auto json = std::make_shared<bool>(false);
  cmd->add_option("N", *count, "How many GPUs")->check(CLI::Range(1, 1024))->capture_default_str();
  cmd->add_option("--min-free-memory", *min_free,
                  "Only GPUs with at least this much free memory (40GiB, 8GB, bytes)")
      ->transform(SizeValue());
  cmd->add_option("--max-util", *max_util,
                  "Only GPUs at most this busy over the window (20% or 0.2)")
      ->capture_default_str();
  cmd->add_option("--window", *window,
                  "Seconds of the driver's utilisation history to judge the busy share by")
      ->check(CLI::Range(0.0, 60.0))
      ->capture_default_str();
  cmd->add_flag("--json", *json, "Print the choice and every GPU's figures as JSON");
  cmd->callback([=] {
    *action = [=]() {
      PickRules rules{*count, static_cast<double>(*min_free), ParseShare(*max_util)};
      std::string error;
      std::vector<GpuCandidate> gpus = SurveyGpus("", *window, &error);
      if (gpus.empty()) {
        fmt::print(stderr, "trainvitals: pick: {}\n", error);
        return 1;
      }
      if (std::string problem = MarkHeldGpus(gpus); !problem.empty()) {
        fmt::print(stderr, "trainvitals: pick: {}; GPUs other runs hold are not left out\n",
                   problem);
      }
      nlohmann::ordered_json all = nlohmann::ordered_json::array();
      for (const GpuCandidate& c : gpus) all.push_back(AsJson(c));
      PickResult result = PickGpus(std::move(gpus), rules);
      bool enough = static_cast<int>(result.chosen.size()) == rules.count;
      std::string devices = VisibleDevices(result.chosen);
      if (*json) {
        nlohmann::ordered_json chosen = nlohmann::ordered_json::array();
        for (const GpuCandidate& c : result.chosen) chosen.push_back(AsJson(c));
        nlohmann::ordered_json out = {{"ok", enough},
                                      {"cuda_visible_devices", devices},
                                      {"chosen", chosen},
                                      {"rejected", result.rejected},
                                      {"gpus", all}};
        PrintJson(out);
        return enough ? 0 : 1;
      }
      if (!enough) {
        fmt::print(stderr, "trainvitals: pick: {} of the {} GPUs asked for qualify\n",
                   result.chosen.size(), rules.count);
        for (const std::string& why : result.rejected) fmt::print(stderr, "  {}\n", why);
        return 1;
      }
      std::cout << "CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=" << devices << "\n";
      return 0;
    };
  });
}

}  // namespace tv
