// Test fixture over the fake driver library (tests/fake_nvml): writes a
// scenario, points FAKE_NVML_SCENARIO at it, keeps the fake loaded for the
// test so its clock can be frozen, and runs GpuSource ticks at chosen times.
#pragma once

#ifdef FAKE_NVML_PATH

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "core/aggregator.h"
#include "core/metrics.h"
#include "sources/gpu_source.h"

namespace tv {

class FakeNvmlTest : public ::testing::Test {
 protected:
  void TearDown() override {
    source_.reset();
    if (lib_ != nullptr) dlclose(lib_);
    unsetenv("FAKE_NVML_SCENARIO");
  }

  // Loads `library` with scenario `json`, clock frozen at 0, and opens a GpuSource.
  void Open(const std::string& json, const char* library = FAKE_NVML_PATH) {
    path_ = ::testing::TempDir() + "fake_nvml_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".json";
    std::ofstream(path_) << json;
    setenv("FAKE_NVML_SCENARIO", path_.c_str(), 1);
    lib_ = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(lib_, nullptr) << dlerror();
    set_time_ = reinterpret_cast<void (*)(double)>(dlsym(lib_, "fakeNvmlSetTime"));
    call_count_ = reinterpret_cast<long (*)(const char*)>(dlsym(lib_, "fakeNvmlCallCount"));
    set_time_(0);
    options_.nvml_library = library;
    source_ = GpuSource::Create(options_, &notices_);
  }

  // One tick at fake time `t` (also the tick's monotonic time).
  Sample Tick(double t, bool row_tick = false) {
    set_time_(t);
    Sample s;
    if (source_ == nullptr) {
      ADD_FAILURE() << "no GpuSource";
      return s;
    }
    s.job.pids = job_pids_;
    tv::Tick tick;
    tick.mono_s = t;
    tick.row_tick = row_tick;
    source_->Read(tick, &s, &notices_);
    return s;
  }

  // Ticks at 10 Hz over [from, from + 1) into one row.
  Row RowAt(double from) {
    Aggregator agg;
    for (int i = 0; i < 10; ++i) agg.Add(Tick(from + i * 0.1, i == 9));
    return agg.Take(0, from + 1);
  }

  static std::optional<Stat> Get(const GpuRow& g, std::string_view name) {
    auto m = GpuMetrics();
    for (size_t i = 0; i < m.size(); ++i) {
      if (m[i].name == name) return g.values[i];
    }
    ADD_FAILURE() << "no metric " << name;
    return std::nullopt;
  }

  long Calls(const char* fn) { return call_count_(fn); }

  void* lib_ = nullptr;
  void (*set_time_)(double) = nullptr;
  long (*call_count_)(const char*) = nullptr;
  std::string path_;
  GpuSourceOptions options_;
  std::vector<int> job_pids_;
  std::vector<Notice> notices_;
  std::unique_ptr<GpuSource> source_;
};

}  // namespace tv

#endif  // FAKE_NVML_PATH
