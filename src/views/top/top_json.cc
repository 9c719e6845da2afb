#include "views/top/top_json.h"

namespace tv {
namespace {

nlohmann::ordered_json Value(const std::optional<double>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json();
}

}  // namespace

nlohmann::ordered_json TopJson(const TopModel& m) {
  const HostSample& h = m.host_sample;
  nlohmann::ordered_json host = {
      {"name", m.host},
      {"cpus", m.cpus},
      {"cpu_util_ratio", Value(h.cpu_util_ratio)},
      {"core_util_ratio", h.core_util_ratio},
      {"memory_total_bytes", Value(h.memory_total_bytes)},
      {"memory_used_bytes", Value(h.memory_used_bytes)},
      {"swap_total_bytes", Value(h.swap_total_bytes)},
      {"swap_used_bytes", Value(h.swap_used_bytes)},
      {"load1", Value(h.load1)},
      {"disk_read_bytes_per_second", Value(h.disk_read_bytes_per_second)},
      {"disk_write_bytes_per_second", Value(h.disk_write_bytes_per_second)},
      {"net_rx_bytes_per_second", Value(h.net_rx_bytes_per_second)},
      {"net_tx_bytes_per_second", Value(h.net_tx_bytes_per_second)},
  };
  nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
  for (const TopGpu& gpu : m.gpus) {
    const GpuSample& g = gpu.sample;
    nlohmann::ordered_json processes = nlohmann::ordered_json::array();
    for (const GpuProcess& p : gpu.processes) {
      processes.push_back({{"pid", p.pid},
                           {"memory_bytes", Value(p.memory_bytes)},
                           {"sm_util_ratio", Value(p.sm_util_ratio)}});
    }
    nlohmann::ordered_json j = {{"index", g.physical_index}};
    if (g.mig_instance >= 0) j["mig_instance"] = g.mig_instance;
    j.update({{"name", gpu.name},
              {"util_ratio", Value(g.util_ratio)},
              {"sm_active_ratio", Value(g.sm_active_ratio)},
              {"memory_used_bytes", Value(g.memory_used_bytes)},
              {"memory_total_bytes", Value(g.memory_total_bytes)},
              {"sessions_memory_bytes", Value(gpu.sessions_memory_bytes)},
              {"temperature_celsius", Value(g.temperature_celsius)},
              {"power_watts", Value(g.power_watts)},
              {"power_limit_watts", Value(g.power_limit_watts)},
              {"throttle_power_ratio", Value(g.throttle_power_ratio)},
              {"throttle_thermal_ratio", Value(g.throttle_thermal_ratio)},
              {"processes", std::move(processes)}});
    gpus.push_back(std::move(j));
  }
  nlohmann::ordered_json sessions = nlohmann::ordered_json::array();
  for (const TopSession& s : m.sessions) {
    sessions.push_back({{"pid", s.pid},
                        {"job_pid", s.job_pid},
                        {"mode", s.mode},
                        {"name", s.name},
                        {"command", s.command},
                        {"run_dir", s.run_dir},
                        {"elapsed_s", m.t - s.start_t},
                        {"updated_t", s.updated_t},
                        {"epoch", Value(s.epoch)},
                        {"step", Value(s.step)},
                        {"steps_per_second", Value(s.steps_per_second)},
                        {"data_wait_ratio", Value(s.data_wait_ratio)},
                        {"cpu_cores", Value(s.cpu_cores)},
                        {"memory_bytes", Value(s.memory_bytes)},
                        {"health_score", Value(s.health_score)},
                        {"findings", s.findings},
                        {"alerts", s.alerts}});
  }
  nlohmann::ordered_json processes = nlohmann::ordered_json::array();
  for (const TopProcess& p : m.processes) {
    processes.push_back(
        {{"pid", p.pid},
         {"ppid", p.ppid},
         {"user", p.user},
         {"name", p.name},
         {"command", p.command},
         {"session_pid", p.session >= 0 ? nlohmann::ordered_json(m.sessions[p.session].pid)
                                        : nlohmann::ordered_json()},
         {"cpu_cores", Value(p.cpu_cores)},
         {"rss_bytes", p.rss_bytes},
         {"gpus", p.gpus},
         {"gpu_memory_bytes", Value(p.gpu_memory_bytes)},
         {"gpu_sm_util_ratio", Value(p.gpu_sm_util_ratio)}});
  }
  nlohmann::ordered_json out = {{"t", m.t}, {"host", std::move(host)}};
  out["gpus"] = std::move(gpus);
  if (!m.gpu_error.empty()) out["gpu_error"] = m.gpu_error;
  out["sessions"] = std::move(sessions);
  out["processes"] = std::move(processes);
  return out;
}

}  // namespace tv
