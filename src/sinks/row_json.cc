#include "sinks/row_json.h"

#include <cmath>

#include <fmt/format.h>

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
    AppendJsonNumber(m.kind == Kind::kCounter ? s.last : s.mean, integral, out);
    if (m.kind == Kind::kGauge && m.keep_max) {
      AppendKey(JsonKey(m), "_max", first, out);
      AppendJsonNumber(s.max, integral, out);
    }
  }
}

}  // namespace

void AppendJsonNumber(double v, bool integral, std::string* out) {
  if (!std::isfinite(v)) {
    out->append("null");
  } else if (integral) {
    fmt::format_to(std::back_inserter(*out), "{:.0f}", v);
  } else {
    double r = std::round(v * 1e4) / 1e4;
    if (r == 0 && v != 0) r = v;  // keep tiny values visible rather than 0
    fmt::format_to(std::back_inserter(*out), "{}", r);
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
  out->append(",\"gpus\":[");
  for (size_t g = 0; g < row.gpus.size(); ++g) {
    const GpuRow& gpu = row.gpus[g];
    if (g > 0) out->push_back(',');
    fmt::format_to(std::back_inserter(*out), "{{\"index\":{},\"physical_index\":{}", gpu.index,
                   gpu.physical_index);
    if (gpu.mig_instance >= 0) fmt::format_to(std::back_inserter(*out), ",\"mig\":{}", gpu.mig_instance);
    bool first = false;
    AppendMetrics(GpuMetrics(), gpu.values, Scope::kGpu, &first, out);
    out->push_back('}');
  }
  out->append("]}");
}

}  // namespace tv
