#include "views/status_line.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <set>

#include "core/format.h"
#include "core/metrics.h"
#include "core/notice_event.h"
#include "store/marker_event_record.h"
#include "views/alert_lines.h"
#include "views/cost_lines.h"
#include "views/epoch_line.h"
#include "views/verdict.h"

namespace tv {
namespace {

// "61–65 GiB", "1.2–3.5 GiB", "200–900 MiB": both ends in the unit of the
// higher, whole numbers from 10 units up.
std::string BytesRange(double lo, double hi) {
  constexpr double kMiB = 1024.0 * 1024, kGiB = kMiB * 1024;
  double unit = hi >= kGiB ? kGiB : kMiB;
  std::string_view name = hi >= kGiB ? "GiB" : "MiB";
  int decimals = hi / unit >= 10 ? 0 : 1;
  std::string a = fmt::format("{:.{}f}", lo / unit, decimals);
  std::string b = fmt::format("{:.{}f}", hi / unit, decimals);
  return a == b ? fmt::format("{} {}", b, name) : fmt::format("{}–{} {}", a, b, name);
}

std::string PercentRange(double lo, double hi) {
  std::string a = FormatPercent(lo), b = FormatPercent(hi);
  return a == b ? a : a.substr(0, a.size() - 1) + "–" + b;
}

std::string GpuName(const GpuRow& g) {
  std::string out = g.mig_instance >= 0 ? fmt::format("GPU{}/MIG{}", g.index, g.mig_instance)
                                        : fmt::format("GPU{}", g.index);
  // Renumbered by CUDA_VISIBLE_DEVICES: nvidia-smi's number too.
  if (g.physical_index != g.index) out += fmt::format(" (phys {})", g.physical_index);
  return out;
}

// Each GPU: load, memory used (of total), the job's share, temperature;
// `brief`: load and memory used only.
std::string EachGpu(const Row& row, bool brief) {
  std::string out;
  for (const GpuRow& g : row.gpus) {
    out += " | " + GpuName(g);
    if (auto u = FindStat(metric::kGpuUtilRatio, g.values)) {
      out += " " + FormatPercent(u->mean);
    }
    if (auto m = FindStat(metric::kGpuMemoryUsedBytes, g.values)) {
      out += " " + FormatBytes(m->last);
      auto t = FindStat(metric::kGpuMemoryTotalBytes, g.values);
      if (t && !brief) out += "/" + FormatBytes(t->last);
    }
    if (brief) continue;
    if (auto j = FindStat(metric::kGpuJobMemoryBytes, g.values)) {
      out += " (job " + FormatBytes(j->last) + ")";
    }
    if (auto t = FindStat(metric::kGpuTemperatureCelsius, g.values)) {
      out += fmt::format(" {:.0f}°C", t->max);
    }
  }
  return out;
}

std::string GpuRange(const Row& row) {
  std::optional<std::pair<double, double>> busy, mem;
  auto widen = [](std::optional<std::pair<double, double>>& r, double v) {
    r = r ? std::pair{std::min(r->first, v), std::max(r->second, v)} : std::pair{v, v};
  };
  for (const GpuRow& g : row.gpus) {
    if (auto u = FindStat(metric::kGpuUtilRatio, g.values)) widen(busy, u->mean);
    if (auto m = FindStat(metric::kGpuMemoryUsedBytes, g.values)) widen(mem, m->last);
  }
  std::string out = fmt::format(" | {} GPUs:", row.gpus.size());
  std::string sep = " ";
  if (busy) {
    out += sep + "busy " + PercentRange(busy->first, busy->second);
    sep = ", ";
  }
  if (mem) out += sep + "mem " + BytesRange(mem->first, mem->second);
  return out;
}

// Process-wide: the notices already said, so that a process running several
// sessions (a Python script fitting twice) says each once.
bool FirstTimeSaid(const std::string& notice) {
  static std::mutex mu;
  static std::set<std::string> said;
  std::lock_guard lock(mu);
  return said.insert(notice).second;
}

// A start notice in the combined line: "GPU (no NVIDIA driver library (...))",
// without the "GPU metrics off, host metrics go on" that the line's opening
// already says.
std::string ShortNotice(std::string_view source, std::string message) {
  constexpr std::string_view kOff = "GPU metrics off, host metrics go on";
  if (message.ends_with(kOff)) {
    message.erase(message.size() - kOff.size());
    while (!message.empty() &&
           std::string_view(" :;,").find(message.back()) != std::string_view::npos) {
      message.pop_back();
    }
  }
  std::string_view label = source == "nvml"         ? "GPU"
                           : source == "rapl"       ? "CPU energy"
                           : source == "job_cgroup" ? "the job's cgroup"
                                                    : source;
  return fmt::format("{} ({})", label, message);
}

// " | ALERT gpu-low-util GPU 1 +2" while alerts fire (the first, and how many more).
std::string FiringMark(const Row& row) {
  const Row::Alert* first = nullptr;
  int more = 0;
  for (const Row::Alert& a : row.alerts) {
    if (!a.firing) continue;
    if (first == nullptr) {
      first = &a;
    } else {
      ++more;
    }
  }
  if (first == nullptr) return "";
  return fmt::format(" | ALERT {}{}{}", first->name,
                     first->gpu >= 0 ? fmt::format(" GPU {}", first->gpu) : "",
                     more > 0 ? fmt::format(" +{}", more) : "");
}

}  // namespace

std::string StatusText(const Row& row, int columns) {
  std::string mark = FiringMark(row);
  std::string head = fmt::format("trainvitals {}{}", FormatDuration(row.elapsed_s), mark);
  if (auto cpu = FindStat(metric::kJobCpuCores, row.values)) {
    head += fmt::format(" | CPU {:.1f} cores", cpu->mean);
  }
  if (auto mem = FindStat(metric::kJobMemoryBytes, row.values); mem && mem->last > 0) {
    head += fmt::format(" | RAM {}", FormatBytes(mem->last));
  }
  // The same in fewer columns, for narrow terminals.
  std::string brief_head = fmt::format("trainvitals {}{}", FormatDuration(row.elapsed_s), mark);
  if (auto cpu = FindStat(metric::kJobCpuCores, row.values)) {
    brief_head += fmt::format(" | CPU {:.1f}", cpu->mean);
  }
  if (auto mem = FindStat(metric::kJobMemoryBytes, row.values); mem && mem->last > 0) {
    brief_head += fmt::format(" | RAM {}", FormatBytes(mem->last));
  }
  std::string host;
  auto used = FindStat(metric::kHostMemoryUsedBytes, row.values);
  auto total = FindStat(metric::kHostMemoryLimitBytes, row.values);
  if (used && total) {
    host = fmt::format(" (host {}/{})", FormatBytes(used->last), FormatBytes(total->last));
  }
  // From the fullest to the shortest; the first that fits is shown.
  std::vector<std::string> tries;
  std::string each = EachGpu(row, false);
  tries.push_back(head + host + each);
  if (row.gpus.size() > 1) {
    std::string range = GpuRange(row);
    tries.push_back(head + host + range);
    tries.push_back(head + range);
    tries.push_back(brief_head + range);
  } else {
    tries.push_back(head + each);
    tries.push_back(head + EachGpu(row, true));
    tries.push_back(brief_head + EachGpu(row, true));
  }
  for (const std::string& t : tries) {
    if (DisplayColumns(t) <= columns) return t;
  }
  return FitColumns(tries.back(), columns);
}

void StatusLine::OnRow(const Row& row) {
  if (!first_row_seen_) {
    first_row_seen_ = true;
    SayNotices();
  }
  if (row.health_score) {
    health_score_ = row.health_score;
    goodput_ratio_ = row.goodput_ratio;
    not_judged_ = row.not_judged;
  }
  if (row_ == nullptr) return;
  // The job's last row, after its processes ended, would read "RAM 0 B".
  auto processes = FindStat(metric::kJobProcesses, row.values);
  if (processes && processes->last == 0) return;
  row_->Draw(StatusText(row, row_->width()));
}

void StatusLine::SayNotices() {
  std::vector<std::string> fresh;
  for (const auto& [source, message] : start_notices_) {
    if (FirstTimeSaid(fmt::format("{}: {}", source, message))) {
      fresh.push_back(ShortNotice(source, message));
    }
  }
  start_notices_.clear();
  if (fresh.empty()) return;
  WriteLine(fmt::format("trainvitals: not measured: {}", fmt::join(fresh, "; ")));
}

void StatusLine::OnEvent(const Event& event) {
  std::string line;
  if (std::optional<Notice> notice = NoticeOfEvent(event)) {
    std::string source = notice->source.empty() ? "?" : notice->source;
    if (!first_row_seen_) {
      start_notices_.emplace_back(std::move(source), std::move(notice->message));
      return;
    }
    std::string said = source + ": " + notice->message;
    if (!FirstTimeSaid(said)) return;
    line = "trainvitals: " + said;
  } else if (event.type == EventType::kMarkerMalformed) {
    line =
        fmt::format("trainvitals: ignored a malformed marker: {}", MalformedMarkerMessage(event));
  } else if (event.type == EventType::kEpoch) {
    line = FormatEpochLine(event.fields);
    // The run's productive share and score so far (docs/findings.md), once
    // the analysis judges, and the rules that could not judge yet.
    if (goodput_ratio_) line += " | goodput " + FormatPercent(*goodput_ratio_);
    if (health_score_) line += fmt::format(" | health {:.0f}", *health_score_);
    if (health_score_ && !not_judged_.empty()) {
      line += fmt::format(" (not judged yet: {})", fmt::join(not_judged_, ", "));
    }
  } else if (event.type == EventType::kCostForecast) {
    // Said once, after the first epoch; later ones go to events.jsonl only.
    if (forecast_said_) return;
    forecast_said_ = true;
    CostForecast forecast;
    (void)ForecastFromJson(event.fields, &forecast);  // the forecaster's own: never wrong
    line = FormatForecastLine(forecast, forecast.currency);
  } else if (event.type == EventType::kFindingOpen) {
    FindingRecord finding;
    if (!FindingFromJson(event.fields, &finding).ok()) return;
    auto said = finding_said_t_.find(finding.id);
    if (said != finding_said_t_.end() && event.t - said->second < finding_repeat_s_) return;
    finding_said_t_[finding.id] = event.t;
    line = FormatFindingLine(finding);
  } else if (event.type == EventType::kAlertFiring || event.type == EventType::kAlertResolved ||
             event.type == EventType::kAlertActionFailed ||
             event.type == EventType::kAlertNoticesLost) {
    line = FormatAlertLine(event);
    if (line.empty()) return;
  } else {
    return;
  }
  WriteLine(line);
}

void StatusLine::OnClose() {
  SayNotices();
  if (row_ != nullptr) row_->Release();
}

void StatusLine::WriteLine(const std::string& line) {
  if (row_ != nullptr) {
    row_->WriteLine(line);
    return;
  }
  std::string out = line + "\n";
  (void)!::write(fd_, out.data(), out.size());
}

}  // namespace tv
