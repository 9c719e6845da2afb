#include "analysis/alerts/evaluator.h"

#include <gtest/gtest.h>

#include "analysis/alerts/rules_file.h"

namespace tv::evaluator_test {
namespace {

// One rule from its expression and timing.
std::shared_ptr<const std::vector<AlertRule>> OneRule(const std::string& expr, double for_s = 0,
                                                      double keep_s = 0, double repeat_s = 0) {
  AlertRule r;
  r.name = "r";
  r.expr = ParseAlertExpr(expr);
  r.for_s = for_s;
  r.keep_firing_for_s = keep_s;
  r.repeat_s = repeat_s;
  return std::make_shared<const std::vector<AlertRule>>(std::vector<AlertRule>{r});
}

Stat Of(double v) { return Stat{v, v, v, 1}; }

// A row at `t` with job.cpu_cores = `cores` (absent when NaN) and GPUs with
// the given util ratios; every GPU runs one of the job's processes.
Row MakeRow(double t, double cores, std::vector<double> gpu_util = {}) {
  Row row;
  row.t = t;
  row.values.resize(SampleMetrics().size());
  if (!std::isnan(cores)) row.values[metric::kJobCpuCores.index] = Of(cores);
  for (size_t i = 0; i < gpu_util.size(); ++i) {
    GpuRow g;
    g.index = static_cast<int>(i);
    g.values.resize(GpuMetrics().size());
    if (!std::isnan(gpu_util[i])) g.values[metric::kGpuUtilRatio.index] = Of(gpu_util[i]);
    g.values[metric::kGpuJobProcesses.index] = Of(1);
    row.gpus.push_back(std::move(g));
  }
  return row;
}

using State = AlertNotice::State;

// The changes of feeding `values` of job.cpu_cores, one row per second from t = 1.
std::vector<AlertChange> Feed(AlertEvaluator& ev, const std::vector<double>& values,
                              double t0 = 1) {
  std::vector<AlertChange> changes;
  for (size_t i = 0; i < values.size(); ++i) ev.OnRow(MakeRow(t0 + i, values[i]), &changes);
  return changes;
}

TEST(AlertEvaluator, ForHoldsItPendingUntilTheConditionLasted) {
  AlertEvaluator ev(OneRule("job.cpu_cores > 4", /*for_s=*/3), 1);
  // True at t=2..5: pending from 2, fires at 5 (3 s later); a dip at 6 resolves it.
  auto changes = Feed(ev, {1, 5, 5, 5, 5, 1, 5, 5});
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].state, State::kFiring);
  EXPECT_DOUBLE_EQ(changes[0].t, 5);
  EXPECT_EQ(changes[1].state, State::kResolved);
  EXPECT_DOUBLE_EQ(changes[1].t, 6);
  // A true spell shorter than `for` never fires.
  AlertEvaluator short_spell(OneRule("job.cpu_cores > 4", 3), 1);
  EXPECT_TRUE(Feed(short_spell, {5, 5, 5, 1, 5, 5, 5, 1}).empty());
}

TEST(AlertEvaluator, KeepFiringForRidesOutABriefDip) {
  AlertEvaluator ev(OneRule("job.cpu_cores > 4", 0, /*keep_s=*/3), 1);
  auto changes = Feed(ev, {5, 1, 1, 5, 1, 1, 1, 1});
  // Fires at 1; the dip at 2-3 is shorter than 3 s; cleared from 5, resolves at 8.
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].state, State::kFiring);
  EXPECT_DOUBLE_EQ(changes[0].t, 1);
  EXPECT_EQ(changes[1].state, State::kResolved);
  EXPECT_DOUBLE_EQ(changes[1].t, 8);
  EXPECT_DOUBLE_EQ(changes[1].starts_at, 1);
}

TEST(AlertEvaluator, SamplesInARowNeedEveryOne) {
  AlertEvaluator ev(OneRule("max(job.cpu_cores[5 samples]) < 2"), 1);
  // Four low samples, a high one, then five low ones: fires on the fifth in a row.
  auto changes = Feed(ev, {1, 1, 1, 1, 3, 1, 1, 1, 1, 1});
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_DOUBLE_EQ(changes[0].t, 10);
  ASSERT_TRUE(changes[0].value.has_value());
  EXPECT_DOUBLE_EQ(*changes[0].value, 1);
}

TEST(AlertEvaluator, TimeWindowsAreRowsAtTheInterval) {
  // A 10 s window at 2 s rows: 5 rows; the mean is judged once the window is covered.
  AlertEvaluator ev(OneRule("mean(job.cpu_cores[10s]) > 4"), 2);
  std::vector<AlertChange> changes;
  std::vector<double> v = {9, 9, 9, 9, 0, 0, 0, 0};
  for (size_t i = 0; i < v.size(); ++i) ev.OnRow(MakeRow(2.0 * i, v[i]), &changes);
  // Means of the last 5: row 4: 36/5 = 7.2 (fires), row 5: 5.4, row 6: 3.6 (resolves).
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_DOUBLE_EQ(changes[0].t, 8);
  EXPECT_DOUBLE_EQ(*changes[0].value, 7.2);
  EXPECT_EQ(changes[1].state, State::kResolved);
  EXPECT_DOUBLE_EQ(changes[1].t, 12);
}

TEST(AlertEvaluator, MinAndMaxFollowTheWindowAcrossManyLaps) {
  AlertEvaluator ev_max(OneRule("max(job.cpu_cores[3 samples]) > 100"), 1);
  AlertEvaluator ev_min(OneRule("min(job.cpu_cores[3 samples]) < -100"), 1);
  std::vector<AlertChange> changes;
  // A slow sawtooth over 1000 rows: max and min of 3 never pass the bounds.
  for (int i = 0; i < 1000; ++i) {
    double v = (i % 50) - 25.0;
    ev_max.OnRow(MakeRow(i, v), &changes);
    ev_min.OnRow(MakeRow(i, v), &changes);
  }
  EXPECT_TRUE(changes.empty());
  ev_max.OnRow(MakeRow(1000, 101), &changes);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_DOUBLE_EQ(*changes[0].value, 101);
  // It stays the max until it leaves the window, 3 rows later.
  ev_max.OnRow(MakeRow(1001, 0), &changes);
  ev_max.OnRow(MakeRow(1002, 0), &changes);
  EXPECT_EQ(changes.size(), 1u);
  ev_max.OnRow(MakeRow(1003, 0), &changes);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[1].state, State::kResolved);
}

TEST(AlertEvaluator, AMissingValueIsFalse) {
  AlertEvaluator ev(OneRule("job.cpu_cores > 4"), 1);
  auto changes = Feed(ev, {5, NAN, 5});
  ASSERT_EQ(changes.size(), 3u);
  EXPECT_EQ(changes[1].state, State::kResolved);
  EXPECT_EQ(changes[2].state, State::kFiring);
}

TEST(AlertEvaluator, RepeatsWhileItFires) {
  AlertEvaluator ev(OneRule("job.cpu_cores > 4", 0, 0, /*repeat_s=*/3), 1);
  auto changes = Feed(ev, {5, 5, 5, 5, 5, 5, 5});
  ASSERT_EQ(changes.size(), 3u);
  EXPECT_EQ(changes[0].state, State::kFiring);
  EXPECT_EQ(changes[1].state, State::kRepeat);
  EXPECT_DOUBLE_EQ(changes[1].t, 4);
  EXPECT_DOUBLE_EQ(changes[2].t, 7);
}

TEST(AlertEvaluator, OneInstancePerGpu) {
  AlertEvaluator ev(OneRule("gpus[].util_ratio < 20%", 2), 1);
  std::vector<AlertChange> changes;
  for (int t = 0; t < 4; ++t) ev.OnRow(MakeRow(t, 1, {0.9, 0.05, 0.1}), &changes);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].gpu, 1);
  EXPECT_EQ(changes[1].gpu, 2);
  EXPECT_DOUBLE_EQ(changes[0].t, 2);
  std::vector<Row::Alert> states;
  ev.States(&states);
  ASSERT_EQ(states.size(), 2u);
  EXPECT_EQ(states[0].name, "r");
  EXPECT_TRUE(states[0].firing);
  // GPU 2 leaves the row: with no value it resolves.
  ev.OnRow(MakeRow(4, 1, {0.9, 0.05}), &changes);
  ASSERT_EQ(changes.size(), 3u);
  EXPECT_EQ(changes[2].gpu, 2);
  EXPECT_EQ(changes[2].state, State::kResolved);
}

TEST(AlertEvaluator, GpuRulesCoverTheJobsGpusUnlessAllGpus) {
  auto rules = OneRule("gpus[].util_ratio < 20%");
  AlertEvaluator ev(rules, 1);
  std::vector<AlertChange> changes;
  Row row = MakeRow(0, 1, {0.9, 0.0});
  row.gpus[1].values[metric::kGpuJobProcesses.index] = Of(0);  // not the job's GPU
  ev.OnRow(row, &changes);
  EXPECT_TRUE(changes.empty());
  std::vector<AlertRule> all = *rules;
  all[0].all_gpus = true;
  AlertEvaluator ev_all(std::make_shared<const std::vector<AlertRule>>(all), 1);
  ev_all.OnRow(row, &changes);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].gpu, 1);
}

TEST(AlertEvaluator, FindingRulesFireWhileTheFindingIsOpen) {
  AlertRule r;
  r.name = "leak";
  r.expr.finding = "gpu-memory-leak";
  AlertEvaluator ev(std::make_shared<const std::vector<AlertRule>>(std::vector<AlertRule>{r}), 1);
  std::vector<AlertChange> changes;
  Row row = MakeRow(0, 1);
  ev.OnRow(row, &changes);
  row.t = 1;
  row.findings.push_back(Row::Finding{"gpu-memory-leak", "warning", true});
  ev.OnRow(row, &changes);
  row.t = 2;
  row.findings[0].active = false;
  ev.OnRow(row, &changes);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_DOUBLE_EQ(changes[0].t, 1);
  EXPECT_EQ(changes[1].state, State::kResolved);
}

TEST(AlertEvaluator, FinishResolvesAndSummarises) {
  AlertEvaluator ev(OneRule("job.cpu_cores > 4"), 1);
  auto changes = Feed(ev, {5, 7, 1, 6, 6});
  ev.Finish(6, &changes);
  ASSERT_EQ(changes.size(), 4u);
  EXPECT_EQ(changes[3].state, State::kResolved);
  std::vector<AlertRecord> s = ev.Summary();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].alert, "r");
  EXPECT_EQ(s[0].times_fired, 2);
  EXPECT_DOUBLE_EQ(s[0].firing_s, 2 + 2);  // 1..3 and 4..6
  ASSERT_TRUE(s[0].worst_value.has_value());
  EXPECT_DOUBLE_EQ(*s[0].worst_value, 7);
}

TEST(AlertEvaluator, OnlyTheRunsEndMarksAResolveAsTheEnds) {
  AlertEvaluator ev(OneRule("job.cpu_cores > 4"), 1);
  auto changes = Feed(ev, {5, 1, 6, 7});
  ev.Finish(5, &changes);
  ASSERT_EQ(changes.size(), 4u);
  EXPECT_EQ(changes[1].state, State::kResolved);  // cleared on the row of 1 core
  EXPECT_FALSE(changes[1].run_ended);
  EXPECT_FALSE(changes[1].held);
  EXPECT_EQ(changes[1].value, 1);
  EXPECT_EQ(changes[3].state, State::kResolved);  // still firing when the run ended
  EXPECT_TRUE(changes[3].run_ended);
  EXPECT_TRUE(changes[3].held);
  EXPECT_EQ(changes[3].value, 7);
}

// A rule from its expression alone.
AlertRule RuleOf(const std::string& expr) {
  AlertRule r;
  r.name = "r";
  r.expr = ParseAlertExpr(expr);
  return r;
}

TEST(AlertResolvedText, SaysTheValueNowAndWhereItIsBack) {
  constexpr double kMiB = 1 << 20;
  AlertRule mem = RuleOf("job.memory_bytes > 600MiB");
  EXPECT_EQ(AlertResolvedText(mem, -1, 524 * kMiB, false, false),
            "job memory 524 MiB, back under 600 MiB");
  EXPECT_EQ(AlertResolvedText(mem, -1, 600 * kMiB, false, false),
            "job memory 600 MiB, back at 600 MiB");
  EXPECT_EQ(AlertResolvedText(mem, -1, std::nullopt, false, false), "job memory has no value now");
  AlertRule idle = RuleOf("gpus[].util_ratio < 20%");
  EXPECT_EQ(AlertResolvedText(idle, 1, 0.45, false, false), "GPU 1 util 45%, back over 20%");
  AlertRule hot = RuleOf("mean(gpus[].throttle_thermal_ratio[5m]) > 25%");
  EXPECT_EQ(AlertResolvedText(hot, 0, 0.1, false, false),
            "GPU 0 throttle thermal (mean over 5 min) 10%, back under 25%");
  AlertRule full = RuleOf(
      "(gpus[].allocator_allocated_bytes or gpus[].memory_used_bytes) / "
      "gpus[].memory_total_bytes > 95%");
  EXPECT_EQ(AlertResolvedText(full, 0, 0.8, false, false),
            "(GPU 0 allocator allocated or GPU 0 memory used) / GPU 0 memory total 80%, back "
            "under 95%");
  AlertRule peak = RuleOf("min(job.rss_bytes_max[3 samples]) >= 1GiB");
  EXPECT_EQ(AlertSubjectText(peak, -1), "job peak rss (min over 3 samples)");
}

TEST(AlertResolvedText, TheRunsEndSaysWhatItWasThen) {
  AlertRule mem = RuleOf("job.memory_bytes > 600MiB");
  EXPECT_EQ(AlertResolvedText(mem, -1, 700.0 * (1 << 20), true, true),
            "the run ended (job memory was 700 MiB over 600 MiB)");
  EXPECT_EQ(AlertResolvedText(mem, -1, std::nullopt, true, false),
            "the run ended (job memory had no value)");
  AlertRule leak;
  leak.name = "leak";
  leak.expr.finding = "gpu-memory-leak";
  EXPECT_EQ(AlertResolvedText(leak, 0, std::nullopt, true, true),
            "the run ended (the finding gpu-memory-leak was open)");
  EXPECT_EQ(AlertResolvedText(leak, 0, std::nullopt, false, false),
            "the finding gpu-memory-leak closed");
}

TEST(AlertEvaluator, SummaryTextFillsItsPlaceholders) {
  AlertRule r;
  r.name = "idle";
  r.expr = ParseAlertExpr("gpus[].util_ratio < 20%");
  r.summary = "{name}: GPU {gpu} at {value}, under {threshold}";
  EXPECT_EQ(AlertSummaryText(r, 3, 0.05), "idle: GPU 3 at 5%, under 20%");
  r.summary.clear();
  EXPECT_EQ(AlertSummaryText(r, 0, 0.05), "idle on GPU 0: gpus[].util_ratio < 20% (5%)");
}

}  // namespace
}  // namespace tv::evaluator_test
