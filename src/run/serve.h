// NodeAgent: `trainvitals serve`, one agent for the whole node. It samples the
// host, every GPU (with the driver's per-process figures) and every job on
// the node (sources/node_jobs.h), follows each job (run/fleet.h) and serves
// them all on /metrics (sinks/prom_jobs.cc; docs/cluster.md), and, with a
// spool, keeps each as a run directory in the run history (run/job_spool.h).
//
// Thread safety: all methods from one controlling thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/endpoint.h"
#include "core/source.h"
#include "run/fleet.h"
#include "run/kubelet_pods.h"

namespace tv {

class MetricsServer;
class Sampler;
class SinkThread;
class Sink;

struct ServeOptions {
  ListenAddress listen;
  double interval_s = 1;  // one sample and one row a interval
  FleetOptions fleet;
  std::string node;  // the node's name; empty: the host name
  // Where each job becomes a run directory (run/job_spool.h); empty: nowhere.
  std::string spool;
  std::string db;  // the run history of the spooled jobs; empty: <spool>/runs.db
  // The kubelet's pod-resources socket, which names Kubernetes jobs
  // (run/kubelet_pods.h).
  std::string kubelet_socket = KubeletPodsSource::kSocket;
};

class NodeAgent {
 public:
  // Binds the address (throws ConfigError when it cannot) and opens the
  // sources; what cannot be read is in notices().
  explicit NodeAgent(ServeOptions options);
  ~NodeAgent();
  NodeAgent(const NodeAgent&) = delete;
  NodeAgent& operator=(const NodeAgent&) = delete;

  void Start();
  void Stop();
  const MetricsServer& server() const { return *server_; }
  const std::string& node() const { return options_.node; }
  size_t gpus() const { return gpus_; }
  // What the sources could not open (no GPU driver, ...), said at the start.
  const std::vector<Notice>& notices() const { return notices_; }

 private:
  ServeOptions options_;
  std::unique_ptr<MetricsServer> server_;
  std::vector<Notice> notices_;
  size_t gpus_ = 0;
  Fleet fleet_;
  std::vector<std::unique_ptr<Sink>> sinks_;
  std::unique_ptr<SinkThread> sink_thread_;
  std::unique_ptr<Sampler> sampler_;
};

}  // namespace tv
