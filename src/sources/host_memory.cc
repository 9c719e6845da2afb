#include "sources/host_memory.h"

#include "sources/text.h"

namespace tv {
namespace {

// "1234 kB" -> bytes; a bare number (no unit) is taken as is.
std::optional<uint64_t> ParseKbValue(std::string_view rest) {
  std::string_view number = text::NextField(&rest);
  std::string_view unit = text::NextField(&rest);
  std::optional<uint64_t> v = text::ParseU64(number);
  if (!v || !text::NextField(&rest).empty()) return std::nullopt;
  if (unit.empty()) return v;
  if (unit != "kB") return std::nullopt;
  return text::CheckedMul(*v, 1024);
}

std::optional<double> Difference(const std::optional<uint64_t>& a,
                                 const std::optional<uint64_t>& b) {
  if (!a || !b || *b > *a) return std::nullopt;
  return static_cast<double>(*a - *b);
}

std::optional<double> AsDouble(const std::optional<uint64_t>& v) {
  if (!v) return std::nullopt;
  return static_cast<double>(*v);
}

}  // namespace

MemInfo ParseMemInfo(std::string_view text) {
  MemInfo m;
  while (!text.empty()) {
    std::string_view line = text::NextLine(&text);
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = line.substr(0, colon);
    std::optional<uint64_t>* field = nullptr;
    if (key == "MemTotal") {
      field = &m.mem_total_bytes;
    } else if (key == "MemFree") {
      field = &m.mem_free_bytes;
    } else if (key == "MemAvailable") {
      field = &m.mem_available_bytes;
    } else if (key == "SwapTotal") {
      field = &m.swap_total_bytes;
    } else if (key == "SwapFree") {
      field = &m.swap_free_bytes;
    } else {
      continue;
    }
    *field = ParseKbValue(line.substr(colon + 1));
  }
  return m;
}

HostMemorySource::HostMemorySource(Env* env, std::string path)
    : env_(env), file_(std::move(path)) {}

void HostMemorySource::Read(const Tick& tick, Sample* out, std::vector<Notice>* notices) {
  HostSample& h = out->host;
  if (!tick.row_tick && read_) {
    h.memory_total_bytes = total_bytes_;
    h.swap_total_bytes = swap_total_bytes_;
    behind_ = true;
    return;
  }
  behind_ = false;
  Status s = file_.Read(env_, &buffer_);
  if (!s.ok()) {
    if (!noticed_) notices->push_back({std::string(name()), "cannot read " + s.message()});
    noticed_ = true;
    return;
  }
  MemInfo m = ParseMemInfo(buffer_);
  read_ = true;
  total_bytes_ = AsDouble(m.mem_total_bytes);
  swap_total_bytes_ = AsDouble(m.swap_total_bytes);
  h.memory_total_bytes = total_bytes_;
  h.memory_available_bytes = AsDouble(m.mem_available_bytes);
  h.memory_used_bytes = Difference(m.mem_total_bytes, m.mem_available_bytes);
  h.swap_total_bytes = swap_total_bytes_;
  h.swap_used_bytes = Difference(m.swap_total_bytes, m.swap_free_bytes);
}

bool HostMemorySource::Flush(Sample* out) {
  if (!behind_) return false;
  std::vector<Notice> said_before;  // a failure was said when it began
  Read({.row_tick = true}, out, &said_before);
  return out->host.memory_used_bytes.has_value();
}

}  // namespace tv
