#include "views/summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/escape.h"
#include "core/format.h"
#include "core/metrics.h"
#include "views/alert_lines.h"
#include "views/cost_lines.h"
#include "views/epoch_line.h"
#include "views/terminal_row.h"
#include "views/verdict.h"

namespace tv {
namespace {

std::string DescribeException(const ExceptionRecord& e) {
  std::string text = e.type.empty() ? "exception" : e.type;
  if (!e.message.empty()) text += ": " + e.message;
  if (e.rank) text += fmt::format(" in rank {}", *e.rank);
  return text;
}

// "  Top CPU  python train.py (main, pid 412) 41.0 s, python train.py
// (DataLoader worker, pid 413) 12.3 s" and the same for memory.
std::string FormatTopProcesses(const TopProcesses& top) {
  constexpr size_t kShown = 3;
  constexpr int kProgramColumns = 40;
  auto label = [](const ProcessRecord& p) {
    std::string program = ShortProgram(p.command);
    if (program.empty()) program = p.name;
    program = FitColumns(VisibleText(program), kProgramColumns);
    std::string role = VisibleText(p.role);
    std::string pid = fmt::format("pid {}", p.pid);
    if (program.empty()) return role.empty() ? pid : fmt::format("{} ({})", role, pid);
    return role.empty() ? fmt::format("{} ({})", program, pid)
                        : fmt::format("{} ({}, {})", program, role, pid);
  };
  std::string out;
  auto line = [&](const char* title, const std::vector<ProcessRecord>& list, auto value) {
    if (list.empty()) return;
    out += title;
    for (size_t i = 0; i < list.size() && i < kShown; ++i) {
      out += fmt::format("{}{} {}", i == 0 ? " " : ", ", label(list[i]), value(list[i]));
    }
    out += "\n";
  };
  line("  Top CPU ", top.by_cpu,
       [](const ProcessRecord& p) { return FormatDuration(p.cpu_seconds.value_or(0)); });
  line("  Top RAM ", top.by_memory,
       [](const ProcessRecord& p) { return FormatBytes(p.memory_bytes_max.value_or(0)); });
  return out;
}

}  // namespace

std::string ShortProgram(std::string_view command) {
  std::vector<std::string_view> args;
  for (size_t i = 0; i < command.size();) {
    size_t end = command.find(' ', i);
    if (end == std::string_view::npos) end = command.size();
    if (end > i) args.push_back(command.substr(i, end - i));
    i = end + 1;
  }
  if (args.empty()) return "";
  auto base = [](std::string_view path) {
    size_t slash = path.rfind('/');
    return slash == std::string_view::npos || slash + 1 == path.size() ? path
                                                                       : path.substr(slash + 1);
  };
  std::string program(base(args[0]));
  bool interpreter = program.starts_with("python") || program.starts_with("pypy");
  for (std::string_view shell : {"sh", "bash", "dash", "zsh", "perl", "ruby", "node", "Rscript"}) {
    interpreter = interpreter || program == shell;
  }
  if (!interpreter) return program;
  for (size_t i = 1; i < args.size(); ++i) {
    std::string_view a = args[i];
    if (a == "-c" || a == "-e" || a == "-") break;  // code on the command line: no script
    if (a == "-m") {
      if (i + 1 < args.size()) program += fmt::format(" -m {}", args[i + 1]);
      break;
    }
    if (a == "-W" || a == "-X") {  // an option with its value apart
      ++i;
      continue;
    }
    if (a == "--") {
      if (i + 1 < args.size()) program += fmt::format(" {}", base(args[i + 1]));
      break;
    }
    if (a.starts_with('-')) continue;
    program += fmt::format(" {}", base(a));
    break;
  }
  return program;
}

std::string WrapSummary(std::string_view text, int width) {
  if (width <= 0) return std::string(text);
  constexpr int kLabelColumn = 11;  // "  GPU0     " : two spaces and a 9-column label
  constexpr std::string_view kHeadline = "trainvitals: ";
  std::string out;
  out.reserve(text.size() + 64);
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    int lead = static_cast<int>(std::min(line.find_first_not_of(' '), line.size()));
    int indent = lead <= 2 ? kLabelColumn : lead < kLabelColumn ? lead + 2 : lead;
    if (lead == 0 && line.starts_with(kHeadline)) indent = static_cast<int>(kHeadline.size());
    out += WrapColumns(line, width, indent);
    if (end == std::string_view::npos) break;
    out += '\n';
    text.remove_prefix(end + 1);
  }
  return out;
}

std::string FormatSummary(const RunSummary& s, int width, std::string_view title) {
  std::string out;
  const RunOutcome& outcome = s.outcome;
  std::string command =
      outcome.command.empty() ? std::string(title) : ShellCommand(outcome.command);
  std::string ending;
  const RunProcesses& processes = s.processes;
  if (outcome.exit_signal) {
    ending = fmt::format("killed by signal {}", *outcome.exit_signal);
    if (outcome.exit_code) ending += fmt::format(" (exit code {})", *outcome.exit_code);
  } else if (outcome.exit_code) {
    ending = fmt::format("exit code {}", *outcome.exit_code);
  } else {
    ending = processes.exception ? "died of an exception" : "ended";
  }
  if (processes.exception) {
    ending += " (" + VisibleText(DescribeException(*processes.exception)) + ")";
  }
  out += fmt::format("trainvitals: {} — {} after {}\n", VisibleText(command), ending,
                     FormatDuration(outcome.duration_s.value_or(0)));

  const RunTotals& t = s.totals;
  auto cpu_mean = t.run.Value(metric::kJobCpuCores);
  auto cpu_max = t.run.Max(metric::kJobCpuCores);
  auto host_cpu_mean = t.run.Value(metric::kHostCpuUtilRatio);
  auto host_cpu_max = t.run.Max(metric::kHostCpuUtilRatio);
  if (cpu_mean || host_cpu_mean) {
    out += "  CPU     ";
    auto limit = t.run.Value(metric::kHostCpuLimitCores);
    if (cpu_mean && cpu_max && limit && *limit > 0) {
      out += fmt::format(" job mean {:.2f} of {:g} cores ({}), max {:.2f}", *cpu_mean, *limit,
                         FormatPercent(*cpu_mean / *limit), *cpu_max);
    } else if (cpu_mean && cpu_max) {
      out += fmt::format(" job mean {:.2f} cores, max {:.2f}", *cpu_mean, *cpu_max);
    }
    if (host_cpu_mean && host_cpu_max) {
      out += fmt::format("{}host mean {}, max {}", cpu_mean ? "; " : " ",
                         FormatPercent(*host_cpu_mean), FormatPercent(*host_cpu_max));
    }
    out += "\n";
  }
  auto mem_max = t.run.Max(metric::kJobMemoryBytes);
  auto rss_max = t.run.Max(metric::kJobRssBytes);
  auto host_max = t.run.Max(metric::kHostMemoryUsedBytes);
  auto limit = t.run.Max(metric::kHostMemoryLimitBytes);
  if (mem_max || rss_max || host_max) {
    out += "  Memory  ";
    std::string sep = " ";
    if (mem_max) out += fmt::format("{}job peak {}", sep, FormatBytes(*mem_max)), sep = "; ";
    if (rss_max) out += fmt::format("{}RSS sum peak {}", sep, FormatBytes(*rss_max)), sep = "; ";
    if (host_max) {
      out += fmt::format("{}host peak {}", sep, FormatBytes(*host_max));
      if (limit) out += fmt::format(" of {}", FormatBytes(*limit));
    }
    out += "\n";
  }
  if (auto procs = t.run.Max(metric::kJobProcesses)) {
    out += fmt::format("  Procs    up to {:.0f} process{}\n", *procs, *procs == 1 ? "" : "es");
  }
  if (processes.top) out += FormatTopProcesses(*processes.top);
  if (auto joules = t.run.Value(metric::kHostCpuEnergyJoules)) {
    out += fmt::format("  Energy   CPU packages {:.0f} J\n", *joules);
  }
  for (const GpuTotals& g : t.gpus) {
    out += g.mig ? fmt::format("  GPU{} MIG {}", g.index, *g.mig)
                 : fmt::format("  GPU{}    ", g.index);
    std::string sep = " ";
    auto um = g.Value(metric::kGpuUtilRatio);
    auto ux = g.Max(metric::kGpuUtilRatio);
    if (um && ux) {
      out += fmt::format("{}util mean {}, max {}", sep, FormatPercent(*um), FormatPercent(*ux));
      sep = "; ";
    }
    if (auto js = g.Value(metric::kGpuJobSmUtilRatio)) {
      out += fmt::format("{}job's SM share mean {}", sep, FormatPercent(*js)), sep = "; ";
    }
    if (auto m = g.Max(metric::kGpuMemoryUsedBytes)) {
      out += fmt::format("{}memory peak {}", sep, FormatBytes(*m)), sep = "; ";
    }
    auto job_memory = g.Max(metric::kGpuJobMemoryBytes);
    auto other_memory = g.Max(metric::kGpuOtherMemoryBytes);
    auto others = g.Max(metric::kGpuOtherProcesses);
    if (job_memory)
      out += fmt::format("{}job's peak {}", sep, FormatBytes(*job_memory)), sep = "; ";
    if (others && *others > 0 && other_memory) {
      out += fmt::format("{}other processes' peak {} ({:.0f} process{})", sep,
                         FormatBytes(*other_memory), *others, *others == 1 ? "" : "es");
      sep = "; ";
    }
    if (auto e = g.Value(metric::kGpuEnergyJoules))
      out += fmt::format("{}energy {:.0f} J", sep, *e), sep = "; ";
    if (auto t = g.Max(metric::kGpuTemperatureCelsius)) {
      out += fmt::format("{}max {:.0f}°C", sep, *t), sep = "; ";
    }
    if (auto th = g.Value(metric::kGpuThrottleAnyRatio); th && *th > 0) {
      double duration = outcome.duration_s.value_or(0);
      out += fmt::format("{}throttled {}", sep, FormatDuration(*th * duration));
      std::string why;
      for (auto [id, reason] :
           {std::pair{metric::kGpuThrottlePowerRatio, "power cap"},
            std::pair{metric::kGpuThrottleThermalRatio, "thermal"},
            std::pair{metric::kGpuThrottleHwSlowdownRatio, "hardware slowdown"}}) {
        if (auto r = g.Value(id); r && *r > 0) {
          why += fmt::format("{}{} {}", why.empty() ? "" : ", ", reason,
                             FormatDuration(*r * duration));
        }
      }
      if (!why.empty()) out += " (" + why + ")";
      sep = "; ";
    }
    out += "\n";
  }
  if (const std::vector<EpochRecord>& epochs = s.epochs; !epochs.empty()) {
    // An epoch cut short (the run ended inside it) is left out of the means.
    double seconds = 0, steps = 0;
    size_t whole = 0;
    for (const EpochRecord& e : epochs) {
      if (!e.complete) continue;
      seconds += e.duration_s;
      steps += static_cast<double>(e.steps);
      ++whole;
    }
    out += fmt::format("  Epochs   {}", whole);
    if (whole > 0) out += fmt::format(", mean {}", FormatDuration(seconds / whole));
    if (seconds > 0 && steps > 0) out += fmt::format(", {:.1f} steps/s", steps / seconds);
    if (size_t cut = epochs.size() - whole; cut > 0) {
      out += fmt::format("; {} cut short (not in the mean)", cut);
    }
    if (auto loss = Logged(epochs.back(), "loss")) out += fmt::format("; last loss {:.4g}", *loss);
    out += "\n";
  }
  if (!s.phases.empty()) out += "  Phases   " + FormatPhases(s.phases) + "\n";
  if (processes.leaked && !processes.leaked->empty()) {
    out += "  Leaked   still running after the command ended:";
    std::string sep = " ";
    for (const ProcessRecord& p : *processes.leaked) {
      out += fmt::format("{}{} (pid {})", sep, VisibleText(p.command), p.pid);
      sep = ", ";
    }
    out += "\n";
  }
  if (s.memory_trends) out += FormatMemoryTrends(*s.memory_trends);
  if (s.cost) out += FormatCost(*s.cost);
  if (s.alerts) out += FormatAlerts(*s.alerts);
  out += FormatVerdict(s.health.value_or(HealthRecord{}), s.findings);
  if (!outcome.run_dir.empty()) out += fmt::format("  Run      {}\n", VisibleText(outcome.run_dir));
  return WrapSummary(out, width);
}

}  // namespace tv
