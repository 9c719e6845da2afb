#include "sinks/metrics_server.h"

#include <fmt/format.h>
#include <httplib.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <vector>

#include "core/config.h"
#include "core/thread.h"
#include "sinks/prom_text.h"

namespace tv {
namespace {

// Few threads: a scrape is a copy of a ready string. Keep-alive connections
// are reused many times, as Prometheus and load testers do.
constexpr size_t kServerThreads = 4;
constexpr size_t kKeepAliveRequests = 1000;

// httplib's worker pool, with named threads ("tv-http") that no exception
// leaves: a connection whose handling throws is dropped, the others go on.
class NamedPool final : public httplib::TaskQueue {
 public:
  explicit NamedPool(size_t n) {
    for (size_t i = 0; i < n; ++i) threads_.emplace_back([this] { Work(); });
  }
  ~NamedPool() override { shutdown(); }
  void enqueue(std::function<void()> fn) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      jobs_.push_back(std::move(fn));
    }
    cv_.notify_one();
  }
  void shutdown() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      closing_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) {
      if (t.joinable()) t.join();
    }
  }

 private:
  void Work() {
    NameThisThread("tv-http");
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return closing_ || !jobs_.empty(); });
        if (jobs_.empty()) return;  // closing and drained
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      try {
        job();
      } catch (...) {
      }
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool closing_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace

MetricsServer::MetricsServer(const ListenAddress& address)
    : host_(address.host), server_(std::make_unique<httplib::Server>()) {
  // SO_REUSEADDR only: httplib's default also sets SO_REUSEPORT, which lets a
  // second run bind a port in use and share its scrapes silently.
  server_->set_socket_options([](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  server_->new_task_queue = [] { return new NamedPool(kServerThreads); };
  server_->set_keep_alive_max_count(kKeepAliveRequests);
  server_->set_tcp_nodelay(true);  // headers and body go in two writes: no Nagle wait
  server_->set_read_timeout(5, 0);
  server_->set_write_timeout(5, 0);
  server_->Get("/metrics", [this](const httplib::Request& req, httplib::Response& res) {
    std::shared_ptr<const PromSnapshot> snap = Current();
    if (WantsOpenMetrics(req.get_header_value("Accept"))) {
      res.set_content(snap ? snap->openmetrics : std::string("# EOF\n"),
                      std::string(kOpenMetricsContentType));
    } else {
      res.set_content(snap ? snap->text : std::string(), std::string(kPromTextContentType));
    }
  });
  server_->Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("trainvitals: metrics at /metrics\n", "text/plain");
  });
  errno = 0;
  if (address.port == 0) {
    port_ = server_->bind_to_any_port(address.host);
  } else if (server_->bind_to_port(address.host, address.port)) {
    port_ = address.port;
  }
  if (port_ <= 0) {
    int err = errno;
    throw ConfigError(fmt::format("--prometheus: cannot listen on {}:{}: {}", address.host,
                                  address.port, err != 0 ? std::strerror(err) : "bind failed"));
  }
  thread_ = std::thread([this] {
    NameThisThread("tv-http");
    RunGuarded("the Prometheus endpoint", "it stops serving, monitoring goes on", [this] {
      if (!server_->listen_after_bind()) {
        fmt::print(stderr,
                   "trainvitals: the Prometheus endpoint stopped serving (monitoring goes on)\n");
      }
    });
    listen_returned_ = true;
  });
}

MetricsServer::~MetricsServer() {
  // stop() only acts on a running server: wait (briefly) for the thread to start.
  for (int i = 0; i < 1000 && !server_->is_running() && !listen_returned_; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

void MetricsServer::Publish(std::shared_ptr<const PromSnapshot> snapshot) {
  std::lock_guard<std::mutex> lock(mu_);
  snapshot_ = std::move(snapshot);
}

std::shared_ptr<const PromSnapshot> MetricsServer::Current() {
  std::lock_guard<std::mutex> lock(mu_);
  return snapshot_;
}

}  // namespace tv
