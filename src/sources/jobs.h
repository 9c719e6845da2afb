// The jobs of a node, found from the cgroup path of their processes (what
// `serve` reads): a Slurm job, a Kubernetes pod, a container, a systemd unit, a
// user's session. Pure functions of text, so every layout is tested on the
// paths the schedulers really make (docs/cluster.md lists them).
//
// Thread safety: every function here is pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/job_identity.h"

namespace tv {

// What a cgroup path says about the job a process belongs to.
struct JobPath {
  // "slurm", "kubernetes", "docker", "podman", "containerd", "crio",
  // "systemd" (a unit of the system), "user" (a session or unit of a user).
  std::string kind;
  // The job's name on this node: the Slurm job id, the pod's UID, the
  // container's short id (12 hex digits), the unit's name, or
  // "user-<uid>/<session or unit>".
  std::string id;
  // The job's own cgroup: the leading part of the path down to the job's
  // directory (a Slurm job's, not its step's; a pod's, not its container's).
  std::string dir;
  std::string step;          // Slurm: "batch", "extern", "0", ...; empty above a step
  std::string container_id;  // Kubernetes: the container under the pod (full id)
  std::string qos;           // Kubernetes: "guaranteed", "burstable" or "besteffort"
};

// The job of one cgroup path (as /proc/PID/cgroup writes it: "/kubepods/..."),
// or none for a path no scheduler made (the root, a plain login shell's
// slice parent, an init scope).
//
// Slurm: cgroup v1 ".../slurm[_<node>]/uid_<u>/job_<id>/step_<s>/task_<t>",
// cgroup v2 "/system.slice/[<node>_]slurmstepd.scope/job_<id>/step_<s>/...".
// Kubernetes, cgroupfs driver: "/kubepods[/burstable|/besteffort]/pod<uid>/<cid>";
// systemd driver: "/kubepods.slice/kubepods-<qos>.slice/kubepods-<qos>-pod<uid
// with _>.slice/<runtime>-<cid>.scope" (cri-containerd, crio, docker).
// Containers: "/docker/<id>", "docker-<id>.scope", "libpod-<id>.scope",
// "cri-containerd-<id>.scope", "crio-<id>.scope", "nerdctl-<id>.scope".
// systemd: the unit under system.slice ("foo.service", "run-u42.scope");
// users: "/user.slice/user-<uid>.slice/session-<n>.scope" and units under
// "user@<uid>.service".
std::optional<JobPath> JobFromCgroupPath(std::string_view path);

// Variables of a process's environment (/proc/PID/environ: NUL-separated
// "NAME=value"), those of `names` found, in the order of `names`.
std::vector<std::pair<std::string, std::string>> EnvironValues(
    std::string_view environ, const std::vector<std::string_view>& names);

// The value of variable `name` among `env` (EnvironValues' pairs); empty when
// it is not there.
std::string EnvironValue(const std::vector<std::pair<std::string, std::string>>& env,
                         std::string_view name);

// What a Slurm job's environment says of it, into `id`: its user
// (SLURM_JOB_USER, when set), account (SLURM_JOB_ACCOUNT), partition
// (SLURM_JOB_PARTITION) and name (SLURM_JOB_NAME). For `serve`'s jobs and for
// a `run` inside a Slurm job alike.
void FillSlurmJobFields(const std::vector<std::pair<std::string, std::string>>& env,
                        JobIdentity* id);

// The GPUs a job was given, as its environment names them: SLURM_JOB_GPUS
// (the node's indices), else NVIDIA_VISIBLE_DEVICES (a container's, indices
// or UUIDs), else CUDA_VISIBLE_DEVICES (indices or UUIDs; Slurm renumbers it
// from 0 inside a job that confines devices, so it comes last). Each entry as
// written; `variable` names where they came from. "all", "none", "void",
// "NoDevFiles" and an empty value name no particular device: none.
struct GpuAllocation {
  std::string variable;
  std::vector<std::string> devices;
};
std::optional<GpuAllocation> AllocatedGpus(
    const std::vector<std::pair<std::string, std::string>>& env);

// The variables a job's environment is read for: identity (docs/cluster.md)
// and the GPUs it was given.
const std::vector<std::string_view>& JobEnvironNames();

}  // namespace tv
