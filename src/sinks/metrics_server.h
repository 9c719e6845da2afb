// MetricsServer: serves GET /metrics over HTTP (cpp-httplib) on its own
// threads, from a snapshot that the sink thread swaps in. A scrape only copies
// a shared_ptr under a mutex, so a slow or stuck scraper never delays the sink
// thread or the sampler. Before the first row, /metrics is empty.
//
// Thread safety: Publish from any thread; the constructor and destructor from
// the controlling thread.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/endpoint.h"

namespace httplib {
class Server;
}

namespace tv {

struct PromSnapshot {
  std::string text;         // text format 0.0.4
  std::string openmetrics;  // OpenMetrics 1.0.0
};

class MetricsServer {
 public:
  // Binds `address` and starts serving. Throws ConfigError when the address
  // cannot be bound (port in use, no such interface), before any child starts.
  explicit MetricsServer(const ListenAddress& address);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // The bound port (the chosen one when the address asked for port 0).
  int port() const { return port_; }
  const std::string& host() const { return host_; }
  void Publish(std::shared_ptr<const PromSnapshot> snapshot);

 private:
  std::shared_ptr<const PromSnapshot> Current();
  std::string host_;
  int port_ = 0;
  std::unique_ptr<httplib::Server> server_;
  std::mutex mu_;
  std::shared_ptr<const PromSnapshot> snapshot_;
  std::atomic<bool> listen_returned_{false};
  std::thread thread_;
};

}  // namespace tv
