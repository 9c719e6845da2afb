// JobIdentity: who a job is. `serve` finds each job on the node from its
// cgroup path and its environment (sources/node_jobs.h); `run`, `attach` and
// the in-process monitor derive the job their training belongs to the same
// way on every node of a multi-node job (run/run_job.h). Stable while the job
// lives.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tv {

struct JobIdentity {
  std::string job;     // the `job` label: Slurm job id, pod UID, container id, unit name,
                       // --job-id, torchelastic run id, "ADDR:PORT@YYYY-MM-DDTHH:MMZ"
  std::string kind;    // serve: "slurm", "kubernetes", "docker", "podman", "containerd",
                       // "crio", "systemd", "user", "tree" (a process tree in no job's
                       // cgroup); run, attach, python: "given", "slurm", "torchelastic",
                       // "rendezvous"
  std::string cgroup;  // the job's cgroup path ("/kubepods/burstable/pod...")
  std::string user;
  std::string account;         // Slurm
  std::string partition;       // Slurm
  std::string name;            // Slurm's job name, or the tree's leader's command
  std::string namespace_name;  // Kubernetes
  std::string pod;             // Kubernetes: the pod's name, when known
  std::string container;       // Kubernetes: the container's name, else its short id
  // The GPUs the job was given as its environment names them (jobs.h
  // AllocatedGpus), and the variable that named them; empty when none did.
  std::vector<std::string> allocated_gpus;
  std::string allocated_from;
  // run, attach: this node's rank among the job's nodes, when the launcher or
  // the environment says it (run/run_job.h).
  std::optional<int> node_rank;
};

// The key a job is known by on the node: its kind and its id ("slurm/4242").
inline std::string JobKey(const JobIdentity& id) { return id.kind + "/" + id.job; }

}  // namespace tv
