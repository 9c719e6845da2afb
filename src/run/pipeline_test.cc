#include "run/pipeline.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

#include "markers/endpoint.h"
#include "run/sources.h"
#include "sources/markers.h"

namespace tv::pipeline_test {
namespace {

std::ptrdiff_t TickPosition(Stage stage) {
  return std::find(kTickOrder.begin(), kTickOrder.end(), stage) - kTickOrder.begin();
}

TEST(Pipeline, TickOrderKeepsItsConstraints) {
  EXPECT_EQ(OrderError(kTickOrder, kTickConstraints), "");
}

TEST(Pipeline, SummaryOrderKeepsItsConstraints) {
  EXPECT_EQ(OrderError(kSummaryOrder, kSummaryConstraints), "");
}

TEST(Pipeline, SourcesComeBeforeObservers) {
  EXPECT_LT(TickPosition(Stage::kMarkers), TickPosition(Stage::kTrainingEvents));
  EXPECT_EQ(TickPosition(Stage::kTrainingEvents), 5);  // the five source stages first
}

TEST(Pipeline, OrderErrorNamesTheBrokenConstraint) {
  const Stage swapped[] = {Stage::kPhases, Stage::kAlerts, Stage::kFindings};
  EXPECT_EQ(OrderError(swapped, kTickConstraints),
            "findings after alerts: a finding rule reads the row's findings");
  const Stage twice[] = {Stage::kPhases, Stage::kCost, Stage::kPhases};
  EXPECT_EQ(OrderError(twice, kTickConstraints), "phases twice");
  const Stage partial[] = {Stage::kAlerts, Stage::kPhases};  // no findings, no cost
  EXPECT_EQ(OrderError(partial, kTickConstraints), "");
}

TEST(Pipeline, ObserversComeInTickOrder) {
  RunObservers o;
  o.cost = std::make_unique<CostForecaster>(CostRates(), std::vector<GpuInfo>());
  o.findings = std::make_unique<FindingsObserver>();
  o.alerts =
      std::make_unique<AlertsObserver>(std::make_shared<const std::vector<AlertRule>>(), 1.0);
  std::vector<SampleObserver*> expected = {&o.training_events, &o.phases,        o.cost.get(),
                                           &o.processes,       o.findings.get(), o.alerts.get()};
  EXPECT_EQ(o.InTickOrder(), expected);
  std::vector<const SummaryPart*> parts = {&o.phases, o.findings.get(), o.alerts.get(),
                                           o.cost.get(), &o.processes};
  EXPECT_EQ(o.InSummaryOrder(), parts);
}

TEST(Pipeline, ObserversNotMadeAreLeftOut) {
  RunObservers o;
  std::vector<SampleObserver*> expected = {&o.training_events, &o.phases, &o.processes};
  EXPECT_EQ(o.InTickOrder(), expected);
  std::vector<const SummaryPart*> parts = {&o.phases, &o.processes};
  EXPECT_EQ(o.InSummaryOrder(), parts);
}

TEST(Pipeline, SummaryPartsAddTheirKeysInOrder) {
  RunObservers o;
  o.findings = std::make_unique<FindingsObserver>();
  o.alerts =
      std::make_unique<AlertsObserver>(std::make_shared<const std::vector<AlertRule>>(), 1.0);
  RunSummary summary;
  for (const SummaryPart* part : o.InSummaryOrder()) part->AddTo(&summary);
  // The keys the parts added to those every summary has, in summary.json's order.
  nlohmann::ordered_json bare = RunSummaryJson(RunSummary());
  nlohmann::ordered_json written = RunSummaryJson(summary);
  std::vector<std::string> keys;
  for (const auto& [key, value] : written.items()) {
    if (!bare.contains(key)) keys.push_back(key);
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"health", "memory_trends", "alerts", "processes"}));
}

TEST(Pipeline, SourcesComeInTickOrder) {
  std::string error;
  std::unique_ptr<MarkerEndpoint> markers = MarkerEndpoint::Create(1.0, &error);
  RunSources run = MakeSources(Config(), ::getpid(), "", markers.get(), error);
  ASSERT_EQ(run.sources.size(), run.stages.size());
  EXPECT_TRUE(std::is_sorted(run.stages.begin(), run.stages.end(),
                             [](Stage a, Stage b) { return TickPosition(a) < TickPosition(b); }));
  EXPECT_NE(std::find(run.stages.begin(), run.stages.end(), Stage::kProcessTree), run.stages.end());
  if (markers) {
    EXPECT_EQ(run.stages.back(), Stage::kMarkers);
    EXPECT_EQ(static_cast<Source*>(run.markers), run.sources.back().get());
  } else {
    EXPECT_EQ(run.markers, nullptr);
  }
}

}  // namespace
}  // namespace tv::pipeline_test
