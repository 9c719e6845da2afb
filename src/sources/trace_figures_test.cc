#include "sources/trace_figures.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace tv::trace_figures_test {
namespace {

nlohmann::json X(const std::string& name, double ts, double dur, const std::string& cat,
                 int tid = 1) {
  return {{"ph", "X"},  {"name", name}, {"ts", ts},  {"dur", dur},
          {"cat", cat}, {"pid", 1},     {"tid", tid}};
}

TEST(TraceFigures, SharesOfTheStepsTimeFromAKinetoTrace) {
  nlohmann::json events = nlohmann::json::array();
  for (int i = 0; i < 4; ++i) {  // steps of 100 us: 40 in the loader, 30 in mm (10 of it nested)
    double t = i * 100;
    events.push_back(X("ProfilerStep#" + std::to_string(i), t, 100, "user_annotation"));
    events.push_back(
        X("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", t, 40, "user_annotation"));
    events.push_back(X("aten::mm", t + 40, 30, "cpu_op"));
    events.push_back(X("aten::empty", t + 45, 10, "cpu_op"));  // inside mm
    events.push_back(X("aten::add", t + 75, 5, "cpu_op"));
    events.push_back(X("Memcpy HtoD (Pageable -> Device)", t + 40, 10, "gpu_memcpy", 7));
    events.push_back(X("gemm", t + 50, 20, "kernel", 7));
  }
  TraceFigures f;
  ASSERT_TRUE(TraceFiguresOf(nlohmann::json{{"traceEvents", events}}.dump(), 4, &f).ok());
  EXPECT_EQ(f.steps, 4);
  EXPECT_NEAR(*f.step_s, 100e-6, 1e-12);
  EXPECT_NEAR(*f.data_loader_share, 0.4, 1e-9);
  EXPECT_NEAR(*f.h2d_share, 0.1, 1e-9);
  EXPECT_NEAR(*f.gpu_idle_share, 0.7, 1e-9);
  ASSERT_EQ(f.top_ops.size(), 2u);  // aten::empty ran inside aten::mm
  EXPECT_EQ(f.top_ops[0].first, "aten::mm");
  EXPECT_NEAR(f.top_ops[0].second, 0.3, 1e-9);
  EXPECT_EQ(f.top_ops[1].first, "aten::add");
  ASSERT_EQ(f.top_kernels.size(), 1u);  // the copy is no kernel
  EXPECT_EQ(f.top_kernels[0].first, "gemm");
  EXPECT_NEAR(f.top_kernels[0].second, 0.2, 1e-9);
}

TEST(TraceFigures, ALegacyTraceWithoutStepRangesSpansTheStepsTaken) {
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"ph", "X"},
                    {"name", "enumerate(DataLoader)#x"},
                    {"ts", 0},
                    {"dur", 25},
                    {"pid", "CPU functions"},
                    {"tid", 1}});
  events.push_back({{"ph", "X"},
                    {"name", "aten::mm"},
                    {"ts", 25},
                    {"dur", 75},
                    {"pid", "CPU functions"},
                    {"tid", 1}});
  TraceFigures f;
  ASSERT_TRUE(TraceFiguresOf(events.dump(), 2, &f).ok());
  EXPECT_EQ(f.steps, 2);
  EXPECT_NEAR(*f.data_loader_share, 0.25, 1e-9);
  EXPECT_FALSE(f.gpu_idle_share);  // no GPU in the trace
  EXPECT_EQ(f.top_ops.at(0).first, "aten::mm");
  EXPECT_FALSE(TraceFiguresOf(events.dump(), 0, &f).ok());
  EXPECT_FALSE(TraceFiguresOf("{\"x\":1}", 2, &f).ok());
  EXPECT_FALSE(TraceFiguresOf("not json", 2, &f).ok());
}

TEST(TraceFigures, PaddlesNamesAndCategories) {
  nlohmann::json events = nlohmann::json::array();
  events.push_back(X("ProfileStep#0[1.000 ms]", 0, 1000, "ProfileStep"));
  events.push_back(X("_DataLoaderIterSingleProcess[300.000 us]", 0, 300, "Dataloader"));
  events.push_back(X("matmul dygraph[500.000 us]", 300, 500, "Operator"));
  TraceFigures f;
  ASSERT_TRUE(TraceFiguresOf(events.dump(), 1, &f).ok());
  EXPECT_NEAR(*f.data_loader_share, 0.3, 1e-9);
  EXPECT_EQ(f.top_ops.at(0).first, "matmul dygraph");
}

}  // namespace
}  // namespace tv::trace_figures_test
