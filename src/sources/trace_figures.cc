#include "sources/trace_figures.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "core/run_file.h"
#include "sources/xplane.h"

namespace tv {
namespace {

bool StartsWith(const std::string& s, std::string_view prefix) { return s.starts_with(prefix); }

// The step ranges each profiler writes: PyTorch "ProfilerStep#3", Paddle "ProfileStep#3".
bool IsStep(const std::string& name) {
  return StartsWith(name, "ProfilerStep#") || StartsWith(name, "ProfileStep#");
}

// PyTorch's DataLoader marks each next() "enumerate(DataLoader)#..."; Paddle's
// is in the category "Dataloader".
bool IsLoader(const std::string& name) { return StartsWith(name, "enumerate(DataLoader)"); }

// Paddle names an event with its length: "matmul dygraph[57.936 us]".
std::string BareName(const std::string& name) {
  size_t open = name.rfind('[');
  if (open == std::string::npos || open == 0 || !name.ends_with("]")) return name;
  return name.substr(0, open);
}

// The time `spans` (sorted by start) cover, clipped to [from, to].
double Covered(const std::vector<TraceSpan>& spans, double from, double to) {
  double covered = 0;
  double end = from;
  for (const TraceSpan& s : spans) {
    double a = std::max(s.ts, end);
    double b = std::min(s.ts + s.dur, to);
    if (b > a) covered += b - a;
    end = std::max(end, std::min(s.ts + s.dur, to));
  }
  return covered;
}

// The part of `s` within [from, to].
double Clipped(const TraceSpan& s, double from, double to) {
  return std::max(0.0, std::min(s.ts + s.dur, to) - std::max(s.ts, from));
}

// The five names with the most time, each as a share of `total`.
std::vector<std::pair<std::string, double>> TopFive(const std::map<std::string, double>& time_of,
                                                    double total) {
  std::vector<std::pair<std::string, double>> sorted(time_of.begin(), time_of.end());
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  sorted.resize(std::min<size_t>(sorted.size(), 5));
  for (auto& [name, time] : sorted) time = std::min(1.0, time / total);
  return sorted;
}

}  // namespace

Status TraceFiguresOf(std::string_view json, int steps_taken, TraceFigures* out) {
  *out = TraceFigures{};
  nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::Invalid("not JSON");
  const nlohmann::json* events = &j;
  if (j.is_object()) {
    auto it = j.find("traceEvents");
    if (it == j.end()) return Status::Invalid("no traceEvents");
    events = &*it;
  }
  if (!events->is_array()) return Status::Invalid("traceEvents is not a list");
  TraceSpans spans;
  for (const nlohmann::json& e : *events) {
    if (!e.is_object() || e.value("ph", "") != "X") continue;
    auto ts = e.find("ts");
    auto dur = e.find("dur");
    auto name = e.find("name");
    if (ts == e.end() || dur == e.end() || name == e.end() || !ts->is_number() ||
        !dur->is_number() || !name->is_string()) {
      continue;
    }
    TraceSpan s{ts->get<double>(), dur->get<double>(),
                BareName(name->get_ref<const std::string&>())};
    spans.Extend(s);
    std::string cat = e.value("cat", "");
    if (IsStep(s.name)) {
      spans.steps.push_back(s);
    } else if (IsLoader(s.name) || cat == "Dataloader") {
      spans.loader.push_back(s);
    } else if (cat == "kernel" || cat == "Kernel" || cat == "gpu_memcpy" || cat == "Memcpy" ||
               cat == "gpu_memset") {
      if (s.name.find("HtoD") != std::string::npos) spans.h2d.push_back(s);
      if (cat == "kernel" || cat == "Kernel") spans.kernels.push_back(s);
      spans.device.push_back(s);
    } else if (cat == "cpu_op" || cat == "Operator" ||
               cat.empty()) {  // empty: the legacy profiler's
      std::string thread = (e.contains("pid") ? e["pid"].dump() : "") + "/" +
                           (e.contains("tid") ? e["tid"].dump() : "");
      spans.ops[thread].push_back(s);
    }
  }
  return FiguresOfSpans(&spans, steps_taken, out);
}

void TraceSpans::Extend(const TraceSpan& s) {
  first = std::min(first, s.ts);
  last = std::max(last, s.ts + s.dur);
}

Status FiguresOfSpans(TraceSpans* spans, int steps_taken, TraceFigures* out) {
  *out = TraceFigures{};
  auto& [steps, loader, h2d, device, kernels, ops, first, last] = *spans;
  if (steps.empty()) {
    // A profiler without step ranges (PyTorch's legacy one): the trace spans
    // the steps the process took under it.
    if (steps_taken <= 0 || !(last > first)) {
      return Status::Invalid("no step ranges (ProfilerStep#N) in the trace");
    }
    for (int i = 0; i < steps_taken; ++i) {
      double length = (last - first) / steps_taken;
      steps.push_back(TraceSpan{first + i * length, length, ""});
    }
  }
  auto by_start = [](const TraceSpan& a, const TraceSpan& b) { return a.ts < b.ts; };
  std::sort(steps.begin(), steps.end(), by_start);
  double from = steps.front().ts;
  double to =
      std::max_element(steps.begin(), steps.end(), [](const TraceSpan& a, const TraceSpan& b) {
        return a.ts + a.dur < b.ts + b.dur;
      })->ts;
  to = std::max(to, steps.back().ts + steps.back().dur);
  double total = Covered(steps, from, to);
  if (total <= 0) return Status::Invalid("the step ranges last no time");
  out->steps = static_cast<int>(steps.size());
  out->step_s = total / static_cast<double>(steps.size()) * 1e-6;
  std::sort(loader.begin(), loader.end(), by_start);
  out->data_loader_share = std::min(1.0, Covered(loader, from, to) / total);
  if (!device.empty()) {
    std::sort(device.begin(), device.end(), by_start);
    std::sort(h2d.begin(), h2d.end(), by_start);
    out->h2d_share = std::min(1.0, Covered(h2d, from, to) / total);
    out->gpu_idle_share = std::max(0.0, 1 - Covered(device, from, to) / total);
  }
  // The operators each thread called itself (not those inside another), by total time.
  std::map<std::string, double> op_time;
  for (auto& [thread, on_thread] : ops) {
    std::sort(on_thread.begin(), on_thread.end(), by_start);
    double outer_end = -1;
    for (const TraceSpan& s : on_thread) {
      if (s.ts < outer_end) continue;  // inside the one before
      outer_end = s.ts + s.dur;
      op_time[s.name] += Clipped(s, from, to);
    }
  }
  out->top_ops = TopFive(op_time, total);
  std::map<std::string, double> kernel_time;
  for (const TraceSpan& s : kernels) kernel_time[s.name] += Clipped(s, from, to);
  out->top_kernels = TopFive(kernel_time, total);
  return Status::Ok();
}

Status ReadTraceFigures(const std::string& dir, int steps_taken, TraceFigures* out) {
  std::error_code ec;
  std::vector<std::string> traces;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".json") traces.push_back(entry.path().string());
  }
  if (traces.empty()) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir, ec)) {
      if (entry.path().string().ends_with(".xplane.pb")) traces.push_back(entry.path().string());
    }
    if (traces.empty())
      return Status::NotFound(fmt::format("no trace (*.json, *.xplane.pb) in {}", dir));
  }
  std::sort(traces.begin(), traces.end());
  std::string text;
  Status read = ReadRegularFile(traces.front(), kMaxTraceBytes, &text);
  if (!read.ok()) return read;
  Status s = traces.front().ends_with(".json") ? TraceFiguresOf(text, steps_taken, out)
                                               : XPlaneFiguresOf(text, steps_taken, out);
  if (!s.ok()) return Status::Invalid(fmt::format("{}: {}", traces.front(), s.message()));
  return s;
}

}  // namespace tv
