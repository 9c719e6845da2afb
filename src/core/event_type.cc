#include "core/event_type.h"

#include <array>

namespace tv {
namespace {

constexpr auto kEvents = std::to_array<EventTypeDef>({
    {EventType::kStart, "start", "`pid`, `mode`", "monitoring began"},
    {EventType::kProcessStart, "process_start", "`pid`, `ppid`, `name`, `cmdline`",
     "a process joined the tree"},
    {EventType::kProcessExit, "process_exit", "`pid`, `name`", "a process left the tree"},
    {EventType::kSourceUnavailable, "source_unavailable", "`source`, `message`",
     "a source cannot read (said once), e.g. RAPL not readable"},
    {EventType::kError, "error", "`message`",
     "monitoring could not start: the command ran unmonitored"},
    {EventType::kSignalForwarded, "signal_forwarded", "`signal`, `name`",
     "`run` forwarded INT, TERM or HUP to the command's process group"},
    {EventType::kKillEscalated, "kill_escalated",
     "`reason` (`second_signal`, `grace_period`), `after_s`, `signal`, `name`",
     "`run` sent SIGKILL to the command's process group and tree: the INT or TERM came again, or "
     "`--kill-after` seconds passed since it"},
    {EventType::kDetached, "detached", "`signal`", "`attach` stopped on Ctrl-C / a signal"},
    {EventType::kEnd, "end", "`exit_code`, `signal`",
     "monitoring ended (`exit_code` is null for `attach` and `python`)"},
    {EventType::kClientStart, "client_start", "`pid`, `rank`, `framework`",
     "a training process connected to the marker socket"},
    {EventType::kClientEnd, "client_end", "`pid`, `rank`, `steps`; `exception`, `message`",
     "it disconnected (steps it took in all; the exception it was dying of, when it said)"},
    {EventType::kEpochBegin, "epoch_begin",
     "`pid`, `rank`, `epoch`; on `epoch_begin` `call` (the script's framework call it belongs to: "
     "1, 2, ...) and `epochs` (the epochs that call plans, when the framework says); `steps`: on "
     "`epoch_begin` the steps the process had taken before it (when the client says), on "
     "`epoch_end` the steps in the epoch, and `wait_s` with `timed_s` (its wait for batches and "
     "its time in its timed loop over the epoch, by its own counters) when it timed its wait",
     "as the training process said, at its own time `t`"},
    {EventType::kEpochEnd, "epoch_end", "", ""},
    {EventType::kPhaseBegin, "phase_begin", "`pid`, `rank`, `phase`",
     "as the training process said"},
    {EventType::kPhaseEnd, "phase_end", "", ""},
    {EventType::kTensorboardLogDir, "tensorboard_log_dir", "`pid`, `rank`, `log_dir`",
     "a training process said it writes TensorBoard logs to `log_dir` ([markers.md](markers.md)): "
     "the run writes its system scalars to `log_dir/system` too, or says in one line why not"},
    {EventType::kStacks, "stacks",
     "`pid`, `rank`, `reason` (`stalled`, `request`), `request`, `file`, `waits_in`, `state`, "
     "`frame`, `at`, `code`, `threads`, each where known",
     "a training process was asked for its Python stacks (the `stalled` finding opened, or "
     "`trainvitals stacks` asked) and wrote them to `file` in the run directory; `waits_in` says "
     "where its main thread waits: `collective`, `data-loader`, `lock`, `io`, `sleep`, `running`, "
     "or `no-answer` (nothing came within 5 s; `state`: `stopped`, `gone`, ...) "
     "([markers.md](markers.md#stacks))"},
    {EventType::kProfile, "profile",
     "`pid`, `rank`, `reason` (the finding's id, or `request`), `request`, `dir`, `steps`, "
     "`seconds`, and what the trace shows: `trace_steps`, `trace_step_s`, "
     "`trace_data_loader_share`, `trace_h2d_share`, `trace_gpu_idle_share`, `trace_top_ops`, "
     "`trace_top_kernels` "
     "(`[[name, share]]`), or `trace_error`",
     "a training process profiled `steps` steps with its framework's profiler into `dir` in the "
     "run directory (a finding opened, or `trainvitals profile` asked); the shares are of the "
     "traced steps' time ([markers.md](markers.md#profiles))"},
    {EventType::kMarkerMalformed, "marker_malformed", "`message`, `note`",
     "the first datagram that was not a valid marker (later ones are only counted in "
     "`training.markers_malformed`)"},
    {EventType::kEpoch, "epoch", "the epoch record (see `epochs` below)",
     "an epoch ended on every rank that began it (one the run ended inside: when the run ended); "
     "also printed as one line on stderr"},
    {EventType::kOomKill, "oom_kill", "`count`, `cgroup`",
     "the kernel's OOM killer killed `count` processes in the job's memory cgroup (`cgroup`, its "
     "directory; the one the job was last seen in when it moved) while the run lasted; written "
     "just before `end`, only when `count` > 0"},
    {EventType::kOom, "oom",
     "`killed_by`; `oom_kills`, `cgroup`, `signal`, `limit_ratio`, `exception`, "
     "`exception_message`, `pid`, `memory_limit_bytes`, `job_memory_bytes_peak` as known",
     "the job died of memory: `killed_by` is `oom_kill` (the count above), `sigkill_at_limit` (the "
     "command died of SIGKILL while the job's memory or cgroup charge was at "
     "`host_memory_critical_ratio` of its limit) or `exception` (a training process said it died "
     "of an out-of-memory error); the `oom` finding opens with it "
     "([findings.md](findings.md#when-the-job-dies-of-memory))"},
    {EventType::kFindingOpen, "finding_open",
     "`id`, `severity`, `subject`, `evidence`, `message`, `advice`",
     "a finding opened ([findings.md](findings.md)); also one line on stderr"},
    {EventType::kFindingClose, "finding_close", "`id`, `subject`, `duration_s`",
     "its condition has been clear for `hold_s`"},
    {EventType::kAlertFiring, "alert_firing",
     "`alert`, `severity`, `gpu` (per-GPU rules), `value`, `threshold`, `expr`, `summary`, "
     "`starts_at`",
     "an alert rule began firing ([alerts.md](alerts.md)); also one line on stderr"},
    {EventType::kAlertResolved, "alert_resolved",
     "the same, and `firing_s` and `resolved_by` (`condition` or `run_end`); its `summary` says "
     "what holds now (`job memory 524 MiB, back under 600 MiB`, `the run ended (GPU 0 util was 12% "
     "under 20%)`)",
     "it resolved: its condition cleared for `keep_firing_for` (`resolved_by` `condition`), or the "
     "run ended while it fired (`run_end`); also one line on stderr"},
    {EventType::kAlertAction, "alert_action", "`alert`, `action`, ...",
     "an alert action that acts on the job ran (`signal`: `signal`, `pid`)"},
    {EventType::kAlertActionFailed, "alert_action_failed", "`alert`, `action`, `message`",
     "an alert's command, webhook or Alertmanager post failed (said once per rule and action), or "
     "its command was stopped when the run ended; also one line on stderr"},
    {EventType::kAlertNoticesLost, "alert_notices_lost",
     "`count`, `actions` (`[{alert, action, count, failed, queue_full, run_ended}]`)",
     "alert notices that never reached their action: its delivery failed (a webhook or "
     "Alertmanager that refused or timed out after its retries, a command that could not be run), "
     "it gave way in a full queue (64 per action), or it was still queued or under way when the "
     "run ended. Said once, when the run ends, only when a notice was lost; also one line on "
     "stderr"},
    {EventType::kCostForecast, "cost_forecast",
     "`planned_epochs`, `epochs_done`, `duration_s`, `energy_kwh`, `co2e_kg`, `money`, `currency` "
     "(with prices)",
     "an epoch of a framework call that planned its epochs ended: the whole run's time, energy, "
     "CO2e and money had every planned epoch run, from the run so far and the mean of its complete "
     "epochs ([cost.md](cost.md)); the first is also one line on stderr"},
});

}  // namespace

std::span<const EventTypeDef> EventTypes() { return kEvents; }

std::string_view EventTypeName(EventType type) {
  for (const EventTypeDef& d : kEvents) {
    if (d.type == type) return d.name;
  }
  return "event";
}

std::optional<EventType> ParseEventType(std::string_view name) {
  for (const EventTypeDef& d : kEvents) {
    if (d.name == name) return d.type;
  }
  return std::nullopt;
}

std::string EventsMarkdown() {
  std::string out = "| type | further keys | when |\n|---|---|---|\n";
  for (size_t i = 0; i < kEvents.size();) {
    std::string names = "`" + std::string(kEvents[i].name) + "`";
    size_t j = i + 1;
    for (; j < kEvents.size() && kEvents[j].keys.empty() && kEvents[j].when.empty(); ++j) {
      names += ", `" + std::string(kEvents[j].name) + "`";
    }
    out += "| " + names + " | " + std::string(kEvents[i].keys) + " | " +
           std::string(kEvents[i].when) + " |\n";
    i = j;
  }
  return out;
}

}  // namespace tv
