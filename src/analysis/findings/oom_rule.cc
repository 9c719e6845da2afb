// oom (oom_rule.h).
#include "analysis/findings/oom_rule.h"

#include <fmt/format.h>

#include <cmath>
#include <csignal>

#include "analysis/findings/format.h"

namespace tv {
namespace {

// The job's last rows before it ended that tell whether it was at its limit:
// the OOM killer acts within moments of the job reaching it.
constexpr double kAtLimitWindow_s = 10;

std::string Mib(double bytes) { return fmt::format("{:.0f} MiB", bytes / (1 << 20)); }

}  // namespace

void OomRule::OnFrame(const Frame& f, RuleContext& /*cx*/) { memory_trail_.Add(f); }

void OomRule::Open(double t, const FindingSubject& subject, nlohmann::ordered_json cause,
                   std::string message, RuleContext& cx) {
  if (tracker_.open()) return;  // one per run: the first cause
  PutIfSet(&cause, "memory_limit_bytes", memory_trail_.LimitBytes());
  PutIfSet(&cause, "job_memory_bytes_peak", memory_trail_.JobPeakBytes());
  cx.Emit(Event{t, EventType::kOom, cause});
  Opening o;
  o.severity = Severity::kCritical;
  o.evidence = EvidenceFromJson(cause);
  o.evidence["memory"] = memory_trail_.Points();
  o.evidence["window_s"] = std::round(memory_trail_.Covered_s(cx.run.interval_s) * 10) / 10;
  o.message = std::move(message);
  cx.Open(FindingId::kOom, tracker_, t, subject, std::move(o));
}

void OomRule::OnMark(const Mark& m, RuleContext& cx) {
  if (m.type != EventType::kClientEnd) return;
  if (m.exception.empty() || !IsOutOfMemoryError(m.exception, m.message)) return;
  FindingSubject subject =
      FindingSubject::Process(m.rank >= 0 ? std::optional<int>(m.rank) : std::nullopt, m.pid);
  nlohmann::ordered_json cause = {{"killed_by", "exception"},
                                  {"exception", m.exception},
                                  {"exception_message", m.message},
                                  {"pid", m.pid}};
  std::string message =
      fmt::format("A training process (pid {}) died of {}{}: it ran out of memory.", m.pid,
                  m.exception, m.message.empty() ? "" : " (" + m.message + ")");
  Open(m.t, subject, std::move(cause), std::move(message), cx);
}

void OomRule::Finish(RuleContext& cx) {
  if (!cx.run.job_end) return;
  double t = cx.run.last_t > 0 ? cx.run.last_t : cx.run.end_t.value_or(0);
  const JobEnd& end = *cx.run.job_end;
  std::optional<double> limit = memory_trail_.LimitBytes();
  if (end.oom_kills > 0) {
    nlohmann::ordered_json cause = {
        {"killed_by", "oom_kill"}, {"oom_kills", end.oom_kills}, {"cgroup", end.cgroup}};
    if (end.signal) cause["signal"] = *end.signal;
    std::string message = fmt::format(
        "The kernel's OOM killer killed {} of the job in its cgroup {}{}: the job ran out of "
        "memory.",
        end.oom_kills == 1 ? "a process" : fmt::format("{} processes", end.oom_kills), end.cgroup,
        limit ? fmt::format(" (limit {})", Mib(*limit)) : "");
    Open(t, FindingSubject::Job(), std::move(cause), std::move(message), cx);
    return;
  }
  if (end.signal != SIGKILL) return;
  std::optional<MemoryTrail::AtLimit> at = memory_trail_.Closest(kAtLimitWindow_s);
  if (!at || at->ratio < cx.th[Th::kHostMemoryCriticalRatio]) return;
  nlohmann::ordered_json cause = {
      {"killed_by", "sigkill_at_limit"}, {"signal", SIGKILL}, {"limit_ratio", Round4(at->ratio)}};
  std::string message = fmt::format(
      "The job was killed (SIGKILL) while it used {} of the memory it may use ({} of {}): most "
      "likely by the kernel's OOM killer.",
      Pct(at->ratio), Mib(at->used_bytes), Mib(at->limit_bytes));
  Open(t, FindingSubject::Job(), std::move(cause), std::move(message), cx);
}

}  // namespace tv
