#include "sources/jobs.h"

#include <gtest/gtest.h>

namespace tv {
namespace {

using namespace std::string_literals;

JobPath Job(std::string_view path) {
  std::optional<JobPath> job = JobFromCgroupPath(path);
  EXPECT_TRUE(job.has_value()) << path;
  return job.value_or(JobPath{});
}

TEST(JobFromCgroupPath, SlurmCgroupV1) {
  JobPath job = Job("/slurm/uid_1000/job_4242/step_0/task_1");
  EXPECT_EQ(job.kind, "slurm");
  EXPECT_EQ(job.id, "4242");
  EXPECT_EQ(job.dir, "/slurm/uid_1000/job_4242");
  EXPECT_EQ(job.step, "0");
  EXPECT_EQ(Job("/slurm_node07/uid_0/job_7/step_batch").step, "batch");
  EXPECT_EQ(Job("/slurm_node07/uid_0/job_7/step_batch").dir, "/slurm_node07/uid_0/job_7");
}

TEST(JobFromCgroupPath, SlurmCgroupV2) {
  JobPath job = Job("/system.slice/slurmstepd.scope/job_13/step_extern/user/task_0");
  EXPECT_EQ(job.kind, "slurm");
  EXPECT_EQ(job.id, "13");
  EXPECT_EQ(job.dir, "/system.slice/slurmstepd.scope/job_13");
  EXPECT_EQ(job.step, "extern");
  EXPECT_EQ(Job("/system.slice/node1_slurmstepd.scope/job_99").id, "99");
  EXPECT_EQ(Job("/system.slice/node1_slurmstepd.scope/job_99").step, "");
  // slurmstepd's own processes are a unit of the system, not a job.
  EXPECT_EQ(Job("/system.slice/slurmstepd.scope/system").kind, "systemd");
  // "job_" outside a Slurm tree is not a Slurm job.
  EXPECT_FALSE(JobFromCgroupPath("/job_12").has_value());
}

TEST(JobFromCgroupPath, KubernetesCgroupfs) {
  JobPath job =
      Job("/kubepods/burstable/pod0f6e2c1a-7d1e-4b7a-9f0e-8d2a3c4b5e6f/"
          "3b1c0e9f8a7d6c5b4a3928170f6e5d4c3b2a19081726354453627180a9b8c7d6");
  EXPECT_EQ(job.kind, "kubernetes");
  EXPECT_EQ(job.id, "0f6e2c1a-7d1e-4b7a-9f0e-8d2a3c4b5e6f");
  EXPECT_EQ(job.dir, "/kubepods/burstable/pod0f6e2c1a-7d1e-4b7a-9f0e-8d2a3c4b5e6f");
  EXPECT_EQ(job.qos, "burstable");
  EXPECT_EQ(job.container_id, "3b1c0e9f8a7d6c5b4a3928170f6e5d4c3b2a19081726354453627180a9b8c7d6");
  JobPath guaranteed = Job("/kubepods/pod11111111-2222-3333-4444-555555555555/abcdef0123456789");
  EXPECT_EQ(guaranteed.qos, "guaranteed");
  EXPECT_EQ(guaranteed.id, "11111111-2222-3333-4444-555555555555");
  EXPECT_EQ(Job("/kubepods/besteffort/podx").qos, "besteffort");
  EXPECT_EQ(Job("/kubepods/besteffort/podx").container_id, "");
}

TEST(JobFromCgroupPath, KubernetesSystemd) {
  JobPath job =
      Job("/kubepods.slice/kubepods-burstable.slice/"
          "kubepods-burstable-pod0f6e2c1a_7d1e_4b7a_9f0e_8d2a3c4b5e6f.slice/"
          "cri-containerd-3b1c0e9f8a7d6c5b4a3928170f6e5d4c.scope");
  EXPECT_EQ(job.kind, "kubernetes");
  EXPECT_EQ(job.id, "0f6e2c1a-7d1e-4b7a-9f0e-8d2a3c4b5e6f");
  EXPECT_EQ(job.dir,
            "/kubepods.slice/kubepods-burstable.slice/"
            "kubepods-burstable-pod0f6e2c1a_7d1e_4b7a_9f0e_8d2a3c4b5e6f.slice");
  EXPECT_EQ(job.qos, "burstable");
  EXPECT_EQ(job.container_id, "3b1c0e9f8a7d6c5b4a3928170f6e5d4c");
  JobPath guaranteed =
      Job("/kubepods.slice/kubepods-pod11111111_2222_3333_4444_555555555555.slice/"
          "crio-abcdef0123456789abcdef.scope");
  EXPECT_EQ(guaranteed.qos, "guaranteed");
  EXPECT_EQ(guaranteed.id, "11111111-2222-3333-4444-555555555555");
  EXPECT_EQ(guaranteed.container_id, "abcdef0123456789abcdef");
  // The QoS slices themselves hold no pod.
  EXPECT_FALSE(JobFromCgroupPath("/kubepods.slice/kubepods-besteffort.slice").has_value());
}

TEST(JobFromCgroupPath, Containers) {
  std::string id = "9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0";
  JobPath docker = Job("/docker/" + id);
  EXPECT_EQ(docker.kind, "docker");
  EXPECT_EQ(docker.id, "9f8e7d6c5b4a");
  EXPECT_EQ(docker.dir, "/docker/" + id);
  JobPath scope = Job("/system.slice/docker-" + id + ".scope");
  EXPECT_EQ(scope.kind, "docker");
  EXPECT_EQ(scope.dir, "/system.slice/docker-" + id + ".scope");
  EXPECT_EQ(Job("/machine.slice/libpod-" + id + ".scope/container").kind, "podman");
  EXPECT_EQ(Job("/libpod_parent/libpod-" + id).kind, "podman");
  EXPECT_EQ(Job("/system.slice/cri-containerd-" + id + ".scope").kind, "containerd");
  // A runtime's monitor is not its container.
  EXPECT_EQ(Job("/machine.slice/libpod-conmon-" + id + ".scope").kind, "systemd");
}

TEST(JobFromCgroupPath, SystemdUnitsAndUsers) {
  JobPath unit = Job("/system.slice/train.service");
  EXPECT_EQ(unit.kind, "systemd");
  EXPECT_EQ(unit.id, "train.service");
  EXPECT_EQ(Job("/system.slice/system-getty.slice/getty@tty1.service").id, "getty@tty1.service");
  EXPECT_EQ(Job("/system.slice/run-u42.scope").id, "run-u42.scope");
  JobPath session = Job("/user.slice/user-1000.slice/session-3.scope");
  EXPECT_EQ(session.kind, "user");
  EXPECT_EQ(session.id, "user-1000/session-3.scope");
  EXPECT_EQ(session.dir, "/user.slice/user-1000.slice/session-3.scope");
  JobPath app = Job("/user.slice/user-1000.slice/user@1000.service/app.slice/train.service");
  EXPECT_EQ(app.id, "user-1000/train.service");
  EXPECT_EQ(app.dir, "/user.slice/user-1000.slice/user@1000.service/app.slice/train.service");
  EXPECT_EQ(Job("/user.slice/user-1000.slice/user@1000.service/init.scope").id,
            "user-1000/init.scope");
  EXPECT_EQ(Job("/user.slice/user-1000.slice/user@1000.service").id, "user-1000/user@1000.service");
}

TEST(JobFromCgroupPath, NoJob) {
  for (std::string_view path : {"/", "", "/init.scope", "/user.slice", "/system.slice",
                                "/user.slice/user-1000.slice", "/process_api/4af9", "/a/b"}) {
    EXPECT_FALSE(JobFromCgroupPath(path).has_value()) << path;
  }
}

TEST(EnvironValues, FindsNamesInOrder) {
  std::string environ = "PATH=/bin\0SLURM_JOB_ID=42\0SLURM_JOB_IDX=9\0HOME=/root\0"s;
  auto values = EnvironValues(environ, {"HOME", "SLURM_JOB_ID", "NOPE"});
  ASSERT_EQ(values.size(), 2U);
  EXPECT_EQ(values[0], (std::pair<std::string, std::string>{"HOME", "/root"}));
  EXPECT_EQ(values[1], (std::pair<std::string, std::string>{"SLURM_JOB_ID", "42"}));
  EXPECT_TRUE(EnvironValues("", {"HOME"}).empty());
}

TEST(FillSlurmJobFields, TakesTheJobsUserAccountPartitionAndName) {
  using Env = std::vector<std::pair<std::string, std::string>>;
  JobIdentity id;
  id.user = "agent-saw-this";
  FillSlurmJobFields(Env{{"SLURM_JOB_ACCOUNT", "physics"},
                         {"SLURM_JOB_PARTITION", "a100"},
                         {"SLURM_JOB_NAME", "train.sh"}},
                     &id);
  EXPECT_EQ(id.user, "agent-saw-this") << "no SLURM_JOB_USER: the user stays";
  EXPECT_EQ(id.account, "physics");
  EXPECT_EQ(id.partition, "a100");
  EXPECT_EQ(id.name, "train.sh");
  FillSlurmJobFields(Env{{"SLURM_JOB_USER", "carol"}}, &id);
  EXPECT_EQ(id.user, "carol");
  EXPECT_EQ(id.account, "");
  EXPECT_EQ(EnvironValue(Env{{"A", "1"}}, "A"), "1");
  EXPECT_EQ(EnvironValue(Env{{"A", "1"}}, "B"), "");
}

TEST(AllocatedGpus, PrefersTheNodesIndices) {
  using Env = std::vector<std::pair<std::string, std::string>>;
  auto slurm = AllocatedGpus(Env{{"CUDA_VISIBLE_DEVICES", "0,1"}, {"SLURM_JOB_GPUS", "2,3"}});
  ASSERT_TRUE(slurm.has_value());
  EXPECT_EQ(slurm->variable, "SLURM_JOB_GPUS");
  EXPECT_EQ(slurm->devices, (std::vector<std::string>{"2", "3"}));
  auto uuid = AllocatedGpus(Env{{"NVIDIA_VISIBLE_DEVICES", "GPU-aa,GPU-bb"}});
  ASSERT_TRUE(uuid.has_value());
  EXPECT_EQ(uuid->devices, (std::vector<std::string>{"GPU-aa", "GPU-bb"}));
  EXPECT_FALSE(AllocatedGpus(Env{{"NVIDIA_VISIBLE_DEVICES", "all"}}).has_value());
  EXPECT_FALSE(AllocatedGpus(Env{{"CUDA_VISIBLE_DEVICES", ""}}).has_value());
  EXPECT_FALSE(AllocatedGpus(Env{}).has_value());
}

}  // namespace
}  // namespace tv
