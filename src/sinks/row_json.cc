#include "sinks/row_json.h"

#include <fmt/format.h>

#include <cmath>

#include "core/escape.h"
#include "core/metrics.h"

namespace tv {
namespace {

void AppendKey(std::string_view key, std::string_view suffix, bool* first, std::string* out) {
  if (!*first) out->push_back(',');
  *first = false;
  out->push_back('"');
  out->append(key);
  out->append(suffix);
  out->append("\":");
}

void AppendMetrics(std::span<const MetricDef> defs, const std::vector<std::optional<Stat>>& values,
                   Scope scope, bool* first, std::string* out) {
  for (size_t i = 0; i < defs.size() && i < values.size(); ++i) {
    const MetricDef& m = defs[i];
    if (m.scope != scope || !values[i]) continue;
    const Stat& s = *values[i];
    bool integral = IsIntegral(m.unit);
    AppendKey(JsonKey(m), "", first, out);
    AppendJsonNumber(RowValue(m, s), integral, out);
    if (m.kind == Kind::kGauge && m.keep_max) {
      AppendKey(JsonKey(m), "_max", first, out);
      AppendJsonNumber(s.max, integral, out);
    }
    if (m.kind == Kind::kGauge && m.keep_min) {
      AppendKey(JsonKey(m), "_min", first, out);
      AppendJsonNumber(s.min, integral, out);
    }
  }
}

// Foreign text (a process name cut mid-character at byte 15) may not be
// UTF-8, which no JSON reader accepts: each invalid byte becomes U+FFFD.
void AppendJsonString(std::string_view s, std::string* out) {
  out->push_back('"');
  while (!s.empty()) {
    size_t n = ValidUtf8Length(s);
    char c = s[0];
    if (n == 0) {
      out->append("\\ufffd");
      n = 1;
    } else if (n > 1) {
      out->append(s.substr(0, n));
    } else if (static_cast<unsigned char>(c) < 0x20) {
      fmt::format_to(std::back_inserter(*out), "\\u{:04x}", c);
    } else {
      if (c == '"' || c == '\\') out->push_back('\\');
      out->push_back(c);
    }
    s.remove_prefix(n);
  }
  out->push_back('"');
}

// ,"processes":[{"pid","name","job","memory_bytes","sm_util_ratio"}] when the
// driver listed any (the interval's last sample, most memory first).
void AppendGpuProcesses(const GpuRow& gpu, std::string* out) {
  if (gpu.processes.empty()) return;
  out->append(",\"processes\":[");
  for (size_t i = 0; i < gpu.processes.size(); ++i) {
    const GpuProcess& p = gpu.processes[i];
    if (i > 0) out->push_back(',');
    fmt::format_to(std::back_inserter(*out), "{{\"pid\":{},\"name\":", p.pid);
    AppendJsonString(p.name, out);
    out->append(p.is_job ? ",\"job\":true" : ",\"job\":false");
    if (p.memory_bytes) {
      out->append(",\"memory_bytes\":");
      AppendJsonNumber(*p.memory_bytes, true, out);
    }
    if (p.sm_util_ratio) {
      out->append(",\"sm_util_ratio\":");
      AppendJsonNumber(*p.sm_util_ratio, false, out);
    }
    out->push_back('}');
  }
  out->push_back(']');
}

// "training": {...} when markers said anything; nothing otherwise.
void AppendTrainingJson(const Row& row, std::string* out) {
  std::string body;
  bool first = true;
  AppendMetrics(SampleMetrics(), row.values, Scope::kTraining, &first, &body);
  const TrainingRow& t = row.training;
  if (!t.phase.empty()) {
    AppendKey("phase", "", &first, &body);
    AppendJsonString(t.phase, &body);
  }
  if (!t.scalars.empty()) {
    AppendKey("scalars", "", &first, &body);
    body.push_back('{');
    for (size_t i = 0; i < t.scalars.size(); ++i) {
      if (i > 0) body.push_back(',');
      AppendJsonString(t.scalars[i].first, &body);
      body.push_back(':');
      AppendJsonNumber(t.scalars[i].second, false, &body);
    }
    body.push_back('}');
  }
  if (t.ranks.size() > 1) {
    AppendKey("ranks", "", &first, &body);
    body.push_back('[');
    for (size_t i = 0; i < t.ranks.size(); ++i) {
      const RankSteps& r = t.ranks[i];
      if (i > 0) body.push_back(',');
      fmt::format_to(std::back_inserter(body), "{{\"rank\":{},\"pid\":{},\"steps\":{:.0f}", r.rank,
                     r.pid, r.steps);
      if (r.step) fmt::format_to(std::back_inserter(body), ",\"step\":{:.0f}", *r.step);
      if (r.data_wait_ratio) {
        body.append(",\"data_wait_ratio\":");
        AppendJsonNumber(*r.data_wait_ratio, false, &body);
      }
      if (r.memory_bytes) {
        body.append(",\"memory_bytes\":");
        AppendJsonNumber(*r.memory_bytes, true, &body);
      }
      if (r.memory_anon_pss_bytes) {
        body.append(",\"memory_anon_pss_bytes\":");
        AppendJsonNumber(*r.memory_anon_pss_bytes, true, &body);
      }
      body.push_back('}');
    }
    body.push_back(']');
  }
  if (first) return;
  out->append(",\"training\":{");
  out->append(body);
  out->push_back('}');
}

}  // namespace

void AppendJsonNumber(double v, bool integral, std::string* out) {
  if (!std::isfinite(v)) {
    out->append("null");
  } else if (integral) {
    fmt::format_to(std::back_inserter(*out), "{:.0f}", RoundAsWritten(v, true));
  } else {
    fmt::format_to(std::back_inserter(*out), "{}", RoundAsWritten(v, false));
  }
}

void AppendRowJson(const Row& row, std::string* out) {
  fmt::format_to(std::back_inserter(*out), "{{\"t\":{:.3f},\"elapsed_s\":{:.3f},\"samples\":{}",
                 row.t, row.elapsed_s, row.samples);
  for (Scope scope : {Scope::kHost, Scope::kJob}) {
    fmt::format_to(std::back_inserter(*out), ",\"{}\":{{", ScopeName(scope));
    bool first = true;
    AppendMetrics(SampleMetrics(), row.values, scope, &first, out);
    if (scope == Scope::kHost && !row.core_util_ratio.empty()) {
      AppendKey("core_util_ratio", "", &first, out);
      out->push_back('[');
      for (size_t i = 0; i < row.core_util_ratio.size(); ++i) {
        if (i > 0) out->push_back(',');
        AppendJsonNumber(row.core_util_ratio[i], false, out);
      }
      out->push_back(']');
    }
    out->push_back('}');
  }
  AppendTrainingJson(row, out);
  out->append(",\"gpus\":[");
  for (size_t g = 0; g < row.gpus.size(); ++g) {
    const GpuRow& gpu = row.gpus[g];
    if (g > 0) out->push_back(',');
    fmt::format_to(std::back_inserter(*out), "{{\"index\":{},\"physical_index\":{}", gpu.index,
                   gpu.physical_index);
    if (gpu.mig_instance >= 0)
      fmt::format_to(std::back_inserter(*out), ",\"mig\":{}", gpu.mig_instance);
    bool first = false;
    AppendMetrics(GpuMetrics(), gpu.values, Scope::kGpu, &first, out);
    AppendGpuProcesses(gpu, out);
    out->push_back('}');
  }
  out->append("]}");
}

}  // namespace tv
