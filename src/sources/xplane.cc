#include "sources/xplane.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tv {
namespace {

// Protobuf's wire format, read forward: a field's number and type, then its value.
class Wire {
 public:
  explicit Wire(std::string_view bytes) : at_(bytes.data()), end_(bytes.data() + bytes.size()) {}
  bool ok() const { return ok_; }
  bool done() const { return !ok_ || at_ == end_; }

  // The next field's number and wire type; false at the end or on bad bytes.
  bool Next(uint64_t* field, int* type) {
    if (done()) return false;
    uint64_t key = Varint();
    *field = key >> 3;
    *type = static_cast<int>(key & 7);
    return ok_;
  }
  uint64_t Varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at_ == end_) break;
      auto byte = static_cast<uint8_t>(*at_++);
      v |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return v;
    }
    ok_ = false;
    return 0;
  }
  std::string_view Bytes() {
    uint64_t n = Varint();
    if (!ok_ || n > static_cast<uint64_t>(end_ - at_)) {
      ok_ = false;
      return {};
    }
    std::string_view out(at_, n);
    at_ += n;
    return out;
  }
  // Skips a value of wire `type` (varint, 64-bit, bytes, 32-bit).
  void Skip(int type) {
    size_t fixed = type == 1 ? 8 : type == 5 ? 4 : 0;
    if (type == 0) {
      Varint();
    } else if (type == 2) {
      Bytes();
    } else if (fixed != 0 && static_cast<size_t>(end_ - at_) >= fixed) {
      at_ += fixed;
    } else {
      ok_ = false;
    }
  }

 private:
  const char* at_;
  const char* end_;
  bool ok_ = true;
};

// Each field of message `bytes` in turn: `f(number, type, wire)` reads its
// value from `wire` or returns false to have it skipped. False on bad bytes.
template <typename F>
bool Fields(std::string_view bytes, F&& f) {
  Wire w(bytes);
  uint64_t field = 0;
  int type = 0;
  while (w.Next(&field, &type)) {
    if (!f(field, type, w)) w.Skip(type);
  }
  return w.ok();
}

// XEventMetadata / XStatMetadata {1: id, 2: name}, as a map entry {1: key, 2: value}.
bool NamedEntry(std::string_view entry, std::map<int64_t, std::string>* names) {
  std::string_view value;
  bool ok = Fields(entry, [&](uint64_t n, int type, Wire& w) {
    if (n != 2 || type != 2) return false;
    value = w.Bytes();
    return true;
  });
  int64_t id = 0;
  std::string name;
  ok = ok && Fields(value, [&](uint64_t n, int type, Wire& w) {
         if (n == 1 && type == 0) {
           id = static_cast<int64_t>(w.Varint());
         } else if (n == 2 && type == 2) {
           name = std::string(w.Bytes());
         } else {
           return false;
         }
         return true;
       });
  (*names)[id] = std::move(name);
  return ok;
}

// XStat {1: metadata_id, 3: uint64_value, 4: int64_value}.
bool StatOf(std::string_view stat, int64_t* id, int64_t* value) {
  return Fields(stat, [&](uint64_t n, int type, Wire& w) {
    if (type != 0 || (n != 1 && n != 3 && n != 4)) return false;
    (n == 1 ? *id : *value) = static_cast<int64_t>(w.Varint());
    return true;
  });
}

struct Line {
  std::string name;
  int64_t timestamp_ns = 0;
  std::vector<std::string_view> events;
};

// XLine {2: name, 3: timestamp_ns, 4: events}.
bool LineOf(std::string_view bytes, Line* line) {
  return Fields(bytes, [&](uint64_t n, int type, Wire& w) {
    if (n == 2 && type == 2) {
      line->name = std::string(w.Bytes());
    } else if (n == 3 && type == 0) {
      line->timestamp_ns = static_cast<int64_t>(w.Varint());
    } else if (n == 4 && type == 2) {
      line->events.push_back(w.Bytes());
    } else {
      return false;
    }
    return true;
  });
}

// XEvent {1: metadata_id, 2: offset_ps, 3: duration_ps}.
bool EventOf(std::string_view bytes, int64_t* id, int64_t* offset_ps, int64_t* duration_ps) {
  return Fields(bytes, [&](uint64_t n, int type, Wire& w) {
    if (type != 0 || n < 1 || n > 3) return false;
    auto v = static_cast<int64_t>(w.Varint());
    (n == 1 ? *id : n == 2 ? *offset_ps : *duration_ps) = v;
    return true;
  });
}

// "scope/name:Type" (not "Class::Method"): the operator's type.
std::string_view OpType(std::string_view name) {
  size_t colon = name.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == name.size() ||
      name[colon - 1] == ':') {
    return {};
  }
  return name.substr(colon + 1);
}

// A GPU stream's copy or set, not a kernel: "MemcpyD2H", "Memset", "memcpy HtoD".
bool IsCopy(std::string_view name) {
  return name.starts_with("Memcpy") || name.starts_with("Memset") || name.starts_with("memcpy") ||
         name.starts_with("memset") || name.find("HtoD") != std::string_view::npos ||
         name.find("DtoH") != std::string_view::npos || name.find("DtoD") != std::string_view::npos;
}

bool IsExecutorLine(std::string_view name) {
  return name.starts_with("tf_Compute") || name.starts_with("tf_inter_op");
}

// One XPlane {2: name, 3: lines, 4: event_metadata, 5: stat_metadata, 6: stats}
// into `out`; `start_ns`/`stop_ns` get the profile's times when it says them.
bool ReadPlane(std::string_view bytes, TraceSpans* out, int64_t* start_ns, int64_t* stop_ns) {
  std::string name;
  std::vector<std::string_view> lines, stats;
  std::map<int64_t, std::string> event_names, stat_names;
  bool ok = Fields(bytes, [&](uint64_t n, int type, Wire& w) {
    if (type != 2) return false;
    std::string_view v = w.Bytes();
    if (n == 2) name = std::string(v);
    if (n == 3) lines.push_back(v);
    if (n == 4) NamedEntry(v, &event_names);
    if (n == 5) NamedEntry(v, &stat_names);
    if (n == 6) stats.push_back(v);
    return true;
  });
  for (std::string_view stat : stats) {
    int64_t id = 0, value = 0;
    if (!StatOf(stat, &id, &value)) continue;
    if (stat_names[id] == "profile_start_time") *start_ns = value;
    if (stat_names[id] == "profile_stop_time") *stop_ns = value;
  }
  bool gpu = name.starts_with("/device:GPU:");
  for (std::string_view bytes_of_line : lines) {
    Line line;
    if (!LineOf(bytes_of_line, &line)) return false;
    bool executor = IsExecutorLine(line.name);
    bool stream = gpu && line.name.starts_with("Stream");
    std::string thread = name + "/" + line.name;
    for (std::string_view e : line.events) {
      int64_t id = 0, offset_ps = 0, duration_ps = 0;
      if (!EventOf(e, &id, &offset_ps, &duration_ps)) return false;
      const std::string& event = event_names[id];
      TraceSpan s{
          (static_cast<double>(line.timestamp_ns) * 1e3 + static_cast<double>(offset_ps)) * 1e-6,
          static_cast<double>(duration_ps) * 1e-6,
          {}};
      if (event == "IteratorGetNextOp::DoCompute") {
        out->loader.push_back(s);
      } else if (stream) {
        if (event.find("HtoD") != std::string::npos || event.find("H2D") != std::string::npos) {
          out->h2d.push_back(s);
        } else if (!IsCopy(event)) {
          s.name = event;
          out->kernels.push_back(s);
        }
        out->device.push_back(std::move(s));
      } else if (std::string_view type = OpType(event); executor && !type.empty()) {
        s.name = std::string(type);
        out->ops[thread].push_back(std::move(s));
      }
    }
  }
  return ok;
}

}  // namespace

Status XPlaneSpansOf(std::string_view bytes, TraceSpans* out) {
  *out = TraceSpans{};
  int64_t start_ns = 0, stop_ns = 0;
  std::vector<std::string_view> planes;
  // XSpace {1: planes}.
  bool ok = Fields(bytes, [&](uint64_t n, int type, Wire& w) {
    if (n != 1 || type != 2) return false;
    planes.push_back(w.Bytes());
    return true;
  });
  if (!ok || planes.empty()) return Status::Invalid("not a TensorFlow trace (XSpace)");
  for (std::string_view plane : planes) {
    if (!ReadPlane(plane, out, &start_ns, &stop_ns)) {
      return Status::Invalid("a damaged TensorFlow trace (XPlane)");
    }
  }
  if (stop_ns > start_ns && start_ns > 0) {
    // The events' times count from the profile's start.
    out->first = 0;
    out->last = static_cast<double>(stop_ns - start_ns) * 1e-3;
  } else {
    for (const auto* spans : {&out->loader, &out->device}) {
      for (const TraceSpan& s : *spans) out->Extend(s);
    }
    for (const auto& [thread, spans] : out->ops) {
      for (const TraceSpan& s : spans) out->Extend(s);
    }
  }
  return Status::Ok();
}

Status XPlaneFiguresOf(std::string_view bytes, int steps_taken, TraceFigures* out) {
  TraceSpans spans;
  Status s = XPlaneSpansOf(bytes, &spans);
  if (!s.ok()) return s;
  return FiguresOfSpans(&spans, steps_taken, out);
}

}  // namespace tv
