// What the alert action tests share: a temporary run directory, the events
// the actions report, rules and notices.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "actions/actions.h"

namespace tv::testing_alerts {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tv-alerts-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string operator/(std::string_view name) const { return path_ + "/" + std::string(name); }

 private:
  std::string path_;
};

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// An executable shell script at `path`.
inline void WriteScript(const std::string& path, const std::string& body) {
  std::ofstream(path) << "#!/bin/sh\n" << body;
  ::chmod(path.c_str(), 0755);
}

// The events the actions report, from their threads.
class Recorder {
 public:
  std::function<void(Event)> Callback() {
    return [this](Event e) {
      std::lock_guard<std::mutex> lock(mu_);
      events_.push_back(std::move(e));
    };
  }
  std::vector<Event> Of(std::string_view type) const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<Event> out;
    for (const Event& e : events_) {
      if (EventTypeName(e.type) == type) out.push_back(e);
    }
    return out;
  }

 private:
  mutable std::mutex mu_;
  std::vector<Event> events_;
};

inline AlertRule Rule(std::string name) {
  AlertRule rule;
  rule.name = std::move(name);
  rule.expr.text = "gpus[].util_ratio < 20%";
  rule.expr.threshold = 0.2;
  rule.expr.compare = Compare::kLess;
  rule.expr.per_gpu = true;
  rule.severity = "warning";
  rule.labels = {{"team", "vision"}};
  return rule;
}

inline std::shared_ptr<const std::vector<AlertRule>> Rules(std::vector<AlertRule> rules) {
  return std::make_shared<const std::vector<AlertRule>>(std::move(rules));
}

inline AlertNotice Notice(const AlertRule& rule, AlertNotice::State state, int gpu = 0,
                          std::string summary = "GPU 0 under 20 %") {
  AlertNotice n;
  n.state = state;
  n.rule = &rule;
  n.gpu = gpu;
  n.starts_at = 1764529200.5;
  n.t = state == AlertNotice::State::kResolved ? 1764529260.25 : n.starts_at;
  n.value = 0.125;
  n.summary = std::move(summary);
  return n;
}

inline AlertContext Context(const std::string& run_dir) {
  AlertContext c;
  c.run = "resnet-42";
  c.host = "node7";
  c.run_dir = run_dir;
  return c;
}

// Polls `done` every 10 ms for up to `timeout_s`.
template <typename F>
bool WaitFor(F done, double timeout_s) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

inline double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace tv::testing_alerts
