// The fake driver's model: devices with time-varying values read from a JSON
// scenario (format in README.md). Single-threaded, like the tests that use it.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace fake_nvml {

// A value over seconds since nvmlInit: a constant, a piecewise-linear ramp
// ([[t, v], ...]) or a step function ({"step": [[t, v], ...]}).
struct Series {
  std::vector<std::pair<double, double>> points;
  bool step = false;
  bool present = false;
  double At(double t) const;
  // Integral from 0 to t (value-seconds).
  double Integral(double t) const;
};
Series ParseSeries(const nlohmann::json& j);

struct Process {
  std::string pid;  // a number, "job", "job:N", or "${VAR}"
  Series memory_bytes;
  Series sm_util;       // percent
  int pid_now() const;  // resolved at each call; 0 when it names no process
};

struct ErrorRule {
  int code = 0;
  double from_s = 0;
};

struct Device {
  std::string name, uuid, serial;
  int cc_major = 9, cc_minor = 0;
  std::map<std::string, Series> series;     // see README.md for the names
  std::map<std::string, ErrorRule> errors;  // by NVML function name
  double lost_from_s = -1;                  // GPU_IS_LOST from then on; <0: never
  std::map<std::string, double> hangs;      // by NVML function: never returns from then on
  std::vector<Process> processes;
  double util_period_s = 1.0 / 6;  // driver sample buffers; 0: none
  double power_period_s = 0.02;
  double proc_period_s = 0.2;
  std::map<unsigned, Series> gpm;  // metric id -> value; empty: GPM unsupported
  // MIG.
  bool is_mig = false;
  unsigned gpu_instance = 0;
  unsigned mig_max = 0;
  std::vector<Device*> mig_slots;  // nullptr: an empty slot
  Device* parent = nullptr;
};

struct World {
  std::string driver_version = "550.54.15";
  std::string nvml_version = "12.550.54.15";
  int cuda_version = 12040;
  int init_error = 0;
  double init_delay_s = 0;                       // nvmlInit takes this long
  std::vector<std::unique_ptr<Device>> devices;  // whole GPUs
  std::vector<std::unique_ptr<Device>> slices;   // MIG slices, owned here
};

// Loads $FAKE_NVML_SCENARIO (two default GPUs when unset). Returns an NVML code.
int LoadWorld(World* world);
int ErrorCode(const std::string& name);  // "NOT_SUPPORTED" -> 3

}  // namespace fake_nvml
