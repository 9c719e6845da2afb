// MetricsServer: serves GET /metrics over HTTP/1.1 from a snapshot that the
// sink thread swaps in. A scrape only copies a shared_ptr under a mutex, so a
// slow or stuck scraper never delays the sink thread or the sampler. Before
// the first row, /metrics is empty.
//
// One thread ("tv-http") runs a non-blocking epoll loop over every connection,
// so no peer holds a thread: hundreds of idle or stalled connections cost a
// file descriptor each, and scrapes are answered beside them. Defences against
// hostile local peers (ServerLimits): a request whose head is not complete
// within header_timeout after its first byte (or after the connection opened)
// is closed; a kept-alive connection silent for idle_timeout is closed; a
// peer that does not read its answer for write_timeout is closed; at
// max_connections, a new connection closes the oldest idle one first (then
// the oldest waiting for a request head, then the oldest still being
// answered). Keep-alive and pipelined requests are served in order.
//
// Thread safety: Publish from any thread; the constructors and the destructor
// from the controlling thread.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/endpoint.h"

namespace tv {

struct PromSnapshot {
  std::string text;         // text format 0.0.4
  std::string openmetrics;  // OpenMetrics 1.0.0
};

struct ServerLimits {
  std::chrono::milliseconds header_timeout{5000};
  std::chrono::milliseconds idle_timeout{60000};
  std::chrono::milliseconds write_timeout{10000};
  int max_connections = 512;  // lowered to half the open-file limit when that is less
  size_t max_head_bytes = 8192;
};

class MetricsServer {
 public:
  // Binds `address` and starts serving. Throws ConfigError when the address
  // cannot be bound (port in use, no such interface), before any child starts.
  explicit MetricsServer(const ListenAddress& address, const ServerLimits& limits = {});
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // The bound port (the chosen one when the address asked for port 0).
  int port() const { return port_; }
  const std::string& host() const { return host_; }
  void Publish(std::shared_ptr<const PromSnapshot> snapshot);

 private:
  class Loop;
  std::shared_ptr<const PromSnapshot> Current();
  std::string host_;
  int port_ = 0;
  std::mutex mu_;
  std::shared_ptr<const PromSnapshot> snapshot_;
  std::unique_ptr<Loop> loop_;
  std::thread thread_;
};

}  // namespace tv
