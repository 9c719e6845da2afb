// The job a `run`, `attach` or in-process session belongs to (docs/cli.md
// "One job across nodes"): derived the same way on every node of a multi-node
// job (torchrun or DDP started on each node, each under its own `trainvitals
// run`), so that every node's meta.json, run history entry and Prometheus
// series name the same job. The first of these that gives one:
//   1. --job-id ID (config key job_id): kind "given";
//   2. SLURM_JOB_ID: kind "slurm", with the job's user, account, partition
//      and name (sources/jobs.h FillSlurmJobFields, as `serve` reads them);
//   3. TORCHELASTIC_RUN_ID, else a torchrun launcher's --rdzv-id; never
//      "none", torchrun's default: kind "torchelastic";
//   4. MASTER_ADDR and MASTER_PORT, else the launcher's --rdzv-endpoint, else
//      its --master-addr and --master-port: "ADDR:PORT@YYYY-MM-DDTHH:MMZ",
//      the rendezvous and the minute the run started (UTC): kind "rendezvous".
// The node's rank in the job goes with it where known: the launcher's
// --node-rank, else GROUP_RANK, else SLURM_NODEID.
//
// Thread safety: all pure, except SessionEnviron (reads the environment).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/env.h"
#include "core/job_identity.h"

namespace tv {

// Variables of an environment as name and value (sources/jobs.h
// EnvironValues' form).
using EnvironPairs = std::vector<std::pair<std::string, std::string>>;

struct RunJobInput {
  std::string given;                 // --job-id; empty: none
  EnvironPairs env;                  // the session's, of RunJobEnvironNames()
  std::vector<std::string> command;  // the command run starts, or the attached process's
  double start_t = 0;                // when the run started, Unix seconds
};

// The run's job by the rules above; none when nothing names one.
std::optional<JobIdentity> DeriveRunJob(const RunJobInput& in);

// The variables DeriveRunJob reads.
const std::vector<std::string_view>& RunJobEnvironNames();

// What a torchrun launcher's own options (those before the training script)
// say of the job; each field empty (none) when not given.
struct LauncherArgs {
  std::string rdzv_id;        // --rdzv-id
  std::string rdzv_endpoint;  // --rdzv-endpoint HOST[:PORT]
  std::string master_addr;    // --master-addr
  std::string master_port;    // --master-port
  std::optional<int> node_rank;
};

// The launcher options of `argv` when it starts a torchrun launcher:
// `torchrun ...`, `python[3[.N]] -m torch.distributed.run ...` or `... -m
// torch.distributed.launch ...` (either path). Options in either spelling
// (--rdzv-id, --rdzv_id), as `--opt value` or `--opt=value`. With
// --standalone, torchrun makes its own rendezvous: no --rdzv-id or
// --rdzv-endpoint is taken. None for any other command.
std::optional<LauncherArgs> TorchrunArgs(const std::vector<std::string>& argv);

// "2026-11-30T14:05Z": the minute of Unix time `t`, UTC.
std::string UtcMinute(double t);

// The environment of the session's job, of RunJobEnvironNames(): for
// "attach", the target's /proc/PID/environ read through `env` (empty when
// unreadable: another user's process); otherwise the environment trainvitals
// itself was started with (run's, or the training process's own).
EnvironPairs SessionEnviron(std::string_view mode, int root_pid, Env* env);

}  // namespace tv
