#include "store/meta_record.h"

#include <gtest/gtest.h>

#include "store/run_v1_fixture.h"

namespace tv::meta_record_test {
namespace {

TEST(MetaRecord, AMetaJsonWrittenBy010ComesBackByteForByte) {
  nlohmann::ordered_json meta = RunV1Json("meta.json");
  MetaRecord m = MetaFromJson(meta);
  EXPECT_EQ(m.name, "loop");
  EXPECT_EQ(m.host, "vm");
  ASSERT_EQ(m.gpus.size(), 2u);
  EXPECT_EQ(m.gpus[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(m.gpus[0].energy_source, "counter");
  ASSERT_TRUE(m.gpu_driver.has_value());
  EXPECT_EQ(m.gpu_driver->backend, "nvml");
  EXPECT_EQ(MetaJson(m).dump(), meta.dump());
}

TEST(MetaRecord, WhatIsAbsentOrOfAnotherTypeStaysUnknown) {
  auto j = nlohmann::json::parse(
      R"({"name": 3, "command": ["python", 1, "train.py"], "start_t": "soon",
          "gpus": [{"index": 1, "name": "A100"}, 7], "pid": 12.5})");
  MetaRecord m = MetaFromJson(j);
  EXPECT_EQ(m.name, "");
  EXPECT_TRUE(m.command.empty());  // not a list of words: unknown
  EXPECT_FALSE(m.start_t);
  EXPECT_FALSE(m.pid);
  ASSERT_EQ(m.gpus.size(), 1u);
  EXPECT_EQ(m.gpus[0].index, 1);
  EXPECT_EQ(m.gpus[0].mig_instance, -1);
  EXPECT_TRUE(m.thresholds.is_null());
  EXPECT_FALSE(m.gpu_driver);
  // Nothing at all is a record of unknowns, not an error.
  EXPECT_EQ(MetaFromJson(nlohmann::json()).gpus.size(), 0u);
}

TEST(MetaRecord, ARunWithoutJudgesOrGpusWritesNeither) {
  MetaRecord m;
  m.mode = "attach";
  nlohmann::ordered_json j = MetaJson(m);
  EXPECT_FALSE(j.contains("thresholds"));
  EXPECT_FALSE(j.contains("gpu_driver"));
  EXPECT_FALSE(j.contains("prometheus_url"));
  EXPECT_TRUE(j["gpus"].is_array());
}

TEST(MetaRecord, AJobsNodeRankIsWrittenWhenKnownAndReadBack) {
  MetaRecord m;
  JobIdentity job;
  job.job = "10.0.0.1:29500@2026-11-30T14:05Z";
  job.kind = "rendezvous";
  job.node_rank = 2;
  m.job = job;
  nlohmann::ordered_json j = MetaJson(m);
  EXPECT_EQ(j["job"], (nlohmann::ordered_json{
                          {"id", "10.0.0.1:29500@2026-11-30T14:05Z"},
                          {"kind", "rendezvous"},
                          {"node_rank", 2},
                      }));
  MetaRecord back = MetaFromJson(j);
  ASSERT_TRUE(back.job.has_value());
  EXPECT_EQ(back.job->kind, "rendezvous");
  EXPECT_EQ(back.job->node_rank, 2);
  job.node_rank.reset();
  m.job = job;
  EXPECT_FALSE(MetaJson(m)["job"].contains("node_rank")) << "unknown: left out";
  for (const char* bad :
       {R"({"job": {"id": "7", "node_rank": -1}})", R"({"job": {"id": "7", "node_rank": "0"}})",
        R"({"job": {"id": "7", "node_rank": 1.5}})"}) {
    EXPECT_FALSE(MetaFromJson(nlohmann::json::parse(bad)).job->node_rank) << bad;
  }
}

TEST(GpuInfo, RealIdsAndMigAreWrittenOnlyWhenKnownInAlphabeticalOrder) {
  GpuInfo g;
  g.index = 2;
  g.name = "A100";
  g.id = "gpu-1";
  g.energy_source = "none";
  EXPECT_EQ(GpuInfoJson(g).dump(),
            R"({"energy_source":"none","id":"gpu-1","index":2,"mig_instance":-1,)"
            R"("name":"A100","physical_index":0})");
  g.uuid = "GPU-abc";
  g.mig_enabled = true;
  nlohmann::ordered_json j = GpuInfoJson(g);
  EXPECT_EQ(j["uuid"], "GPU-abc");
  EXPECT_EQ(j["mig_enabled"], true);
  GpuInfo back = GpuInfoFromJson(j);
  EXPECT_EQ(GpuInfoJson(back).dump(), j.dump());
  EXPECT_EQ(GpuModelOf({g}, 2), "A100");
  EXPECT_EQ(GpuModelOf({g}, 0), "");
}

}  // namespace
}  // namespace tv::meta_record_test
