#include "scenario.h"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace fake_nvml {

double Series::At(double t) const {
  if (points.empty()) return 0;
  if (t <= points.front().first) return points.front().second;
  for (size_t i = 1; i < points.size(); ++i) {
    const auto& [t1, v1] = points[i];
    if (t < t1) {
      const auto& [t0, v0] = points[i - 1];
      if (step) return v0;
      return v0 + (v1 - v0) * (t - t0) / (t1 - t0);
    }
  }
  return points.back().second;
}

double Series::Integral(double t) const {
  if (points.empty() || t <= 0) return 0;
  // Exact for both shapes: sum segment areas up to t.
  double area = 0, prev_t = 0, prev_v = At(0);
  std::vector<double> knots;
  for (const auto& p : points) {
    if (p.first > 0 && p.first < t) knots.push_back(p.first);
  }
  knots.push_back(t);
  for (double k : knots) {
    double v_end = step ? prev_v : At(k);
    area += (prev_v + v_end) / 2 * (k - prev_t);
    prev_t = k;
    prev_v = At(k);
  }
  return area;
}

Series ParseSeries(const nlohmann::json& j) {
  Series s;
  s.present = true;
  const nlohmann::json* pts = &j;
  if (j.is_object() && j.contains("step")) {
    s.step = true;
    pts = &j["step"];
  }
  if (pts->is_number()) {
    s.points.emplace_back(0.0, pts->get<double>());
  } else {
    for (const auto& p : *pts) s.points.emplace_back(p[0].get<double>(), p[1].get<double>());
  }
  return s;
}

int ErrorCode(const std::string& name) {
  static const std::map<std::string, int> kCodes = {
      {"SUCCESS", 0},           {"UNINITIALIZED", 1},
      {"INVALID_ARGUMENT", 2},  {"NOT_SUPPORTED", 3},
      {"NO_PERMISSION", 4},     {"NOT_FOUND", 6},
      {"INSUFFICIENT_SIZE", 7}, {"DRIVER_NOT_LOADED", 9},
      {"TIMEOUT", 10},          {"FUNCTION_NOT_FOUND", 13},
      {"GPU_IS_LOST", 15},      {"LIB_RM_VERSION_MISMATCH", 18},
      {"UNKNOWN", 999}};
  auto it = kCodes.find(name);
  return it == kCodes.end() ? 999 : it->second;
}

namespace {

std::vector<int> Children(int root) {
  std::vector<int> kids;
  std::string dir = "/proc/" + std::to_string(root) + "/task";
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return kids;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream in(dir + "/" + e->d_name + "/children");
    int pid = 0;
    while (in >> pid) kids.push_back(pid);
  }
  closedir(d);
  std::sort(kids.begin(), kids.end());
  return kids;
}

Device* ParseDevice(const nlohmann::json& j, World* world, bool is_mig);

void ParseProcesses(const nlohmann::json& j, Device* d) {
  for (const auto& p : j.value("processes", nlohmann::json::array())) {
    Process proc;
    proc.pid =
        p["pid"].is_number() ? std::to_string(p["pid"].get<int>()) : p["pid"].get<std::string>();
    proc.memory_bytes = ParseSeries(p.value("memory_bytes", nlohmann::json(0)));
    if (p.contains("sm_util")) proc.sm_util = ParseSeries(p["sm_util"]);
    d->processes.push_back(std::move(proc));
  }
}

Device* ParseDevice(const nlohmann::json& j, World* world, bool is_mig) {
  auto d = std::make_unique<Device>();
  Device* raw = d.get();
  d->name = j.value("name", "NVIDIA H100 80GB HBM3");
  d->uuid = j.value("uuid", "");
  d->serial = j.value("serial", "1650923000001");
  auto cc = j.value("compute_capability", std::vector<int>{9, 0});
  d->cc_major = cc.at(0);
  d->cc_minor = cc.at(1);
  const nlohmann::json series = j.value("series", nlohmann::json::object());
  for (auto& [key, value] : series.items()) {
    d->series[key] = ParseSeries(value);
  }
  const nlohmann::json errors = j.value("errors", nlohmann::json::object());
  for (auto& [fn, rule] : errors.items()) {
    ErrorRule r;
    if (rule.is_string()) {
      r.code = ErrorCode(rule.get<std::string>());
    } else {
      r.code = ErrorCode(rule.at("code").get<std::string>());
      r.from_s = rule.value("from_s", 0.0);
    }
    d->errors[fn] = r;
  }
  d->lost_from_s = j.value("lost_from_s", -1.0);
  const nlohmann::json hangs = j.value("hang", nlohmann::json::object());
  for (auto& [fn, from_s] : hangs.items()) d->hangs[fn] = from_s.get<double>();
  d->util_period_s = j.value("util_sample_period_s", 1.0 / 6);
  d->power_period_s = j.value("power_sample_period_s", 0.02);
  d->proc_period_s = j.value("process_sample_period_s", 0.2);
  const nlohmann::json gpm = j.value("gpm", nlohmann::json::object());
  for (auto& [id, value] : gpm.items()) {
    d->gpm[static_cast<unsigned>(std::stoul(id))] = ParseSeries(value);
  }
  ParseProcesses(j, raw);
  d->is_mig = is_mig;
  d->gpu_instance = j.value("gpu_instance_id", 0u);
  if (j.contains("mig")) {
    const auto& mig = j["mig"];
    d->mig_max = mig.value("max", 7u);
    d->mig_slots.assign(d->mig_max, nullptr);
    for (const auto& inst : mig.value("instances", nlohmann::json::array())) {
      Device* slice = ParseDevice(inst, world, true);
      slice->parent = raw;
      d->mig_slots.at(inst.value("slot", 0u)) = slice;
    }
  }
  if (is_mig) {
    world->slices.push_back(std::move(d));
  } else {
    world->devices.push_back(std::move(d));
  }
  return raw;
}

}  // namespace

int Process::pid_now() const {
  if (pid.starts_with("${") && pid.ends_with("}")) {
    const char* v = std::getenv(pid.substr(2, pid.size() - 3).c_str());
    return v ? std::atoi(v) : 0;
  }
  if (pid.starts_with("@")) {  // a process that writes its PID into a file once it starts
    std::ifstream in(pid.substr(1));
    int n = 0;
    bool alive = in >> n && n > 0 && ::kill(n, 0) == 0;  // the driver lists live processes only
    return alive ? n : 0;
  }
  if (pid.starts_with("job")) {
    const char* root_env = std::getenv("FAKE_NVML_JOB_ROOT");
    int root = root_env ? std::atoi(root_env) : static_cast<int>(getpid());
    size_t n = pid.size() > 4 ? std::stoul(pid.substr(4)) : 0;
    std::vector<int> kids = Children(root);
    return n < kids.size() ? kids[n] : 0;
  }
  return std::atoi(pid.c_str());
}

int LoadWorld(World* world) {
  *world = World{};
  nlohmann::json j;
  const char* path = std::getenv("FAKE_NVML_SCENARIO");
  if (path == nullptr || *path == '\0') {
    j = nlohmann::json::parse(R"({"devices": [{"uuid": "GPU-00000000-fake-0000-0000-000000000000"},
                                              {"uuid": "GPU-11111111-fake-0000-0000-000000000000"}]})");
  } else {
    std::ifstream in(path);
    if (!in) return 999;
    j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded()) return 999;
  }
  world->driver_version = j.value("driver_version", world->driver_version);
  world->nvml_version = j.value("nvml_version", world->nvml_version);
  world->cuda_version = j.value("cuda_driver_version", world->cuda_version);
  if (j.contains("init_error")) world->init_error = ErrorCode(j["init_error"].get<std::string>());
  world->init_delay_s = j.value("init_delay_s", 0.0);
  int i = 0;
  for (const auto& dev : j.value("devices", nlohmann::json::array())) {
    Device* d = ParseDevice(dev, world, false);
    if (d->uuid.empty()) d->uuid = "GPU-" + std::to_string(i) + "-fake";
    ++i;
  }
  return 0;
}

}  // namespace fake_nvml
