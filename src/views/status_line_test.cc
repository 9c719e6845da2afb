#include "views/status_line.h"

#include <gtest/gtest.h>

#include "core/metrics.h"
#include "views/terminal_row.h"

namespace tv::status_line_test {
namespace {

void Set(std::span<const MetricDef> defs, std::vector<std::optional<Stat>>* values, Scope scope,
         std::string_view name, double v) {
  values->resize(defs.size());
  for (size_t i = 0; i < defs.size(); ++i) {
    if (defs[i].scope == scope && defs[i].name == name) {
      (*values)[i] = Stat{v, v, v, 1};
      return;
    }
  }
  ADD_FAILURE() << name;
}

constexpr double kGiB = 1024.0 * 1024 * 1024;

Row JobRow(int gpus) {
  Row row;
  row.elapsed_s = 12.3;
  Set(SampleMetrics(), &row.values, Scope::kJob, "cpu_cores", 1.5);
  Set(SampleMetrics(), &row.values, Scope::kJob, "memory_bytes", 587.0 * 1024 * 1024);
  Set(SampleMetrics(), &row.values, Scope::kHost, "memory_used_bytes", 5.5 * kGiB);
  Set(SampleMetrics(), &row.values, Scope::kHost, "memory_limit_bytes", 23.5 * kGiB);
  for (int i = 0; i < gpus; ++i) {
    GpuRow g;
    g.index = i;
    g.physical_index = i;
    Set(GpuMetrics(), &g.values, Scope::kGpu, "util_ratio", 0.88 + 0.05 * i / 7.0);
    Set(GpuMetrics(), &g.values, Scope::kGpu, "memory_used_bytes", (61 + 4.0 * i / 7) * kGiB);
    Set(GpuMetrics(), &g.values, Scope::kGpu, "memory_total_bytes", 80 * kGiB);
    Set(GpuMetrics(), &g.values, Scope::kGpu, "job_memory_bytes", 60 * kGiB);
    Set(GpuMetrics(), &g.values, Scope::kGpu, "temperature_celsius", 61);
    row.gpus.push_back(g);
  }
  return row;
}

TEST(StatusText, EverythingWhenItFits) {
  EXPECT_EQ(StatusText(JobRow(1), 200),
            "trainvitals 12.3 s | CPU 1.5 cores | RAM 587 MiB (host 5.50 GiB/23.5 GiB) | GPU0 88% "
            "61.0 GiB/80.0 GiB (job 60.0 GiB) 61°C");
}

TEST(StatusText, FiringAlertsAreMarkedFirst) {
  Row row = JobRow(2);
  row.alerts = {{"gpu-hot", "warning", 0, false},  // resolved: not marked
                {"gpu-low-util", "warning", 1, true},
                {"job-memory-near-limit", "critical", -1, true}};
  std::string text = StatusText(row, 200);
  EXPECT_NE(text.find("trainvitals 12.3 s | ALERT gpu-low-util GPU 1 +1 | CPU"), std::string::npos)
      << text;
  // Kept when the line shortens to the width.
  EXPECT_NE(StatusText(row, 79).find("ALERT gpu-low-util GPU 1 +1"), std::string::npos);
  row.alerts[1].firing = row.alerts[2].firing = false;
  EXPECT_EQ(StatusText(row, 200).find("ALERT"), std::string::npos);
}

TEST(StatusText, OneGpuShortensToTheWidth) {
  std::string text = StatusText(JobRow(1), 79);
  EXPECT_EQ(text, "trainvitals 12.3 s | CPU 1.5 cores | RAM 587 MiB | GPU0 88% 61.0 GiB");
  EXPECT_LE(DisplayColumns(StatusText(JobRow(1), 30)), 30);
}

TEST(StatusText, ManyGpusBecomeOneRange) {
  std::string wide = StatusText(JobRow(8), 199);
  EXPECT_EQ(wide,
            "trainvitals 12.3 s | CPU 1.5 cores | RAM 587 MiB (host 5.50 GiB/23.5 GiB) | 8 GPUs: "
            "busy 88–93%, mem 61–65 GiB");
  std::string narrow = StatusText(JobRow(8), 79);
  EXPECT_EQ(narrow,
            "trainvitals 12.3 s | CPU 1.5 | RAM 587 MiB | 8 GPUs: busy 88–93%, mem 61–65 GiB");
  EXPECT_LE(DisplayColumns(narrow), 79);
}

TEST(StatusText, RenumberedGpuShowsItsPhysicalIndex) {
  Row row = JobRow(1);
  row.gpus[0].physical_index = 3;
  EXPECT_NE(StatusText(row, 200).find("| GPU0 (phys 3) 88%"), std::string::npos);
}

TEST(StatusText, NoJobMemoryReadsAsAbsentNotZero) {
  Row row = JobRow(0);
  Set(SampleMetrics(), &row.values, Scope::kJob, "memory_bytes", 0);
  EXPECT_EQ(StatusText(row, 200).find("RAM 0 B"), std::string::npos);
}

TEST(FitColumns, CutsCodePointsNotBytes) {
  EXPECT_EQ(FitColumns("busy 88–93%", 20), "busy 88–93%");
  EXPECT_EQ(DisplayColumns("88–93 °C"), 8);
  EXPECT_EQ(FitColumns("busy 88–93%", 8), "busy 88…");
  EXPECT_EQ(FitColumns("ab cd", 4), "ab…");  // no space before the ellipsis
}

}  // namespace
}  // namespace tv::status_line_test
