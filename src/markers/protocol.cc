#include "markers/protocol.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

namespace tv {
namespace {

constexpr size_t kMaxLogDirBytes = 4096;  // PATH_MAX

constexpr std::pair<MarkerType, std::string_view> kTypeNames[] = {
    {MarkerType::kHello, "hello"},
    {MarkerType::kEpochBegin, "epoch_begin"},
    {MarkerType::kEpochEnd, "epoch_end"},
    {MarkerType::kPhaseBegin, "phase_begin"},
    {MarkerType::kPhaseEnd, "phase_end"},
    {MarkerType::kScalars, "scalars"},
    {MarkerType::kAllocator, "allocator"},
    {MarkerType::kBye, "bye"},
    {MarkerType::kTensorboardLogDir, "tensorboard_log_dir"},
    {MarkerType::kStacks, "stacks"},
    {MarkerType::kRequest, "request"},
    {MarkerType::kProfile, "profile"},
};

constexpr AllocatorField kAllocatorFields[] = {
    {"allocated_bytes", &AllocatorFigures::allocated_bytes},
    {"peak_allocated_bytes", &AllocatorFigures::peak_allocated_bytes},
    {"reserved_bytes", &AllocatorFigures::reserved_bytes},
    {"peak_reserved_bytes", &AllocatorFigures::peak_reserved_bytes},
    {"active_bytes", &AllocatorFigures::active_bytes},
    {"num_ooms", &AllocatorFigures::num_ooms},
    {"alloc_retries", &AllocatorFigures::alloc_retries},
};

constexpr int64_t kMaxCall = 1'000'000'000;
constexpr int64_t kMaxPlannedEpochs = int64_t{1} << 53;  // whole in a double
constexpr size_t kMaxUuid = 96;  // "GPU-" and 36 characters; MIG's older form is longer

// A phase name or a scalar's name: short, and plain enough to be a tag.
bool IsName(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.' || c == '/';
    if (!ok) return false;
  }
  return true;
}

void AppendNumber(double v, std::string* out) {
  if (std::isfinite(v)) {
    fmt::format_to(std::back_inserter(*out), "{}", v);
  } else {
    out->append("null");
  }
}

std::optional<double> Number(const nlohmann::json& j, std::string_view key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  double v = it->get<double>();
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

constexpr int64_t kMaxPid = 4194304;  // PID_MAX_LIMIT on 64-bit Linux
constexpr int64_t kMaxRank = 1 << 24;
constexpr int64_t kMaxDevice = 4096;
constexpr size_t kMaxDevices = 64;

// An optional whole number in [lo, hi] at `key` into `*out`; false with
// `error` set when it is there and is not one.
bool WholeIn(const nlohmann::json& j, std::string_view key, int64_t lo, int64_t hi, int* out,
             std::string* error) {
  auto it = j.find(key);
  if (it == j.end()) return true;
  double v = it->is_number() ? it->get<double>() : NAN;
  if (!std::isfinite(v) || v != std::floor(v) || v < static_cast<double>(lo) ||
      v > static_cast<double>(hi)) {
    *error = fmt::format("\"{}\" must be a whole number from {} to {}", key, lo, hi);
    return false;
  }
  *out = static_cast<int>(v);
  return true;
}

bool Fail(std::string* error, std::string message) {
  *error = std::move(message);
  return false;
}

// "steps", when there: epoch_begin's so far, epoch_end's in the epoch, bye's in all.
bool OptionalSteps(const nlohmann::json& j, Marker* m, std::string* error) {
  auto steps = j.find("steps");
  if (steps == j.end()) return true;
  if (!steps->is_number_integer() || steps->get<int64_t>() < 0) {
    return Fail(error, "\"steps\" must be a whole number >= 0");
  }
  m->steps = steps->get<int64_t>();
  return true;
}

// epoch_end's "wait_s" and "timed_s", when there: both, each a number >= 0,
// the wait no longer than the timed time (a little slack for rounding).
bool EpochWait(const nlohmann::json& j, Marker* m, std::string* error) {
  auto wait = j.find("wait_s");
  auto timed = j.find("timed_s");
  if (wait == j.end() && timed == j.end()) return true;
  double w = wait != j.end() && wait->is_number() ? wait->get<double>() : NAN;
  double t = timed != j.end() && timed->is_number() ? timed->get<double>() : NAN;
  if (!std::isfinite(w) || !std::isfinite(t) || w < 0 || t < 0 || w > t + 1e-3) {
    return Fail(error, "\"wait_s\" and \"timed_s\" must both be seconds >= 0, wait_s <= timed_s");
  }
  m->wait_s = w;
  m->timed_s = t;
  return true;
}

// A request's "id": a name of letters, digits and -_.
bool RequestId(const nlohmann::json& j, Marker* m, std::string* error) {
  auto id = j.find("id");
  if (id == j.end() || !id->is_string() || !IsName(id->get_ref<const std::string&>()) ||
      id->get_ref<const std::string&>().find('/') != std::string::npos) {
    return Fail(error, "\"id\" must be a name of letters, digits and -_.");
  }
  m->id = id->get<std::string>();
  return true;
}

bool ParseBody(const nlohmann::json& j, Marker* m, std::string* error) {
  switch (m->type) {
    case MarkerType::kEpochBegin:
    case MarkerType::kEpochEnd: {
      auto epoch = j.find("epoch");
      if (epoch == j.end() || !epoch->is_number_integer() || epoch->get<int64_t>() < 0) {
        return Fail(error, "\"epoch\" must be a whole number >= 0");
      }
      m->epoch = epoch->get<int64_t>();
      if (!OptionalSteps(j, m, error)) return false;
      auto call = j.find("call");
      if (call != j.end()) {
        if (!call->is_number_integer() || call->get<int64_t>() < 1 ||
            call->get<int64_t>() > kMaxCall) {
          return Fail(error, "\"call\" must be a whole number >= 1");
        }
        m->call = call->get<int64_t>();
      }
      if (m->type == MarkerType::kEpochEnd && !EpochWait(j, m, error)) return false;
      auto planned = j.find("epochs");
      if (m->type == MarkerType::kEpochBegin && planned != j.end()) {
        if (!planned->is_number_integer() || planned->get<int64_t>() < 1 ||
            planned->get<int64_t>() > kMaxPlannedEpochs) {
          return Fail(error, fmt::format("\"epochs\" must be a whole number from 1 to {}",
                                         kMaxPlannedEpochs));
        }
        m->planned_epochs = planned->get<int64_t>();
      }
      return true;
    }
    case MarkerType::kPhaseBegin:
    case MarkerType::kPhaseEnd: {
      auto phase = j.find("phase");
      if (phase == j.end() || !phase->is_string() ||
          !IsName(phase->get_ref<const std::string&>())) {
        return Fail(error, "\"phase\" must be a name such as \"train\" or \"eval\"");
      }
      m->phase = phase->get<std::string>();
      return true;
    }
    case MarkerType::kScalars: {
      auto values = j.find("values");
      if (values == j.end() || !values->is_object())
        return Fail(error, "\"values\" must be an object");
      for (const auto& [key, value] : values->items()) {
        if (!IsName(key) || !value.is_number()) {
          return Fail(error, fmt::format("scalar \"{}\" must be a plain name with a number", key));
        }
        m->scalars.emplace_back(key, value.get<double>());
      }
      return true;
    }
    case MarkerType::kAllocator: {
      auto devices = j.find("devices");
      if (devices == j.end() || !devices->is_array())
        return Fail(error, "\"devices\" must be a list");
      if (devices->size() > kMaxDevices) {
        return Fail(error, fmt::format("more than {} devices", kMaxDevices));
      }
      for (const auto& d : *devices) {
        AllocatorFigures f;
        if (!d.is_object() || !d.contains("device") ||
            !WholeIn(d, "device", 0, kMaxDevice, &f.device, error)) {
          return Fail(error, fmt::format("each device needs a whole-number \"device\" from 0 "
                                         "to {}",
                                         kMaxDevice));
        }
        if (auto uuid = d.find("uuid"); uuid != d.end()) {
          if (!uuid->is_string() || uuid->get_ref<const std::string&>().size() > kMaxUuid) {
            return Fail(error, "a device's \"uuid\" must be a short string");
          }
          f.uuid = uuid->get<std::string>();
        }
        for (const AllocatorField& field : kAllocatorFields) f.*field.value = Number(d, field.name);
        m->allocator.push_back(f);
      }
      return true;
    }
    case MarkerType::kHello: {
      auto fw = j.find("framework");
      if (fw != j.end() && fw->is_string()) m->framework = fw->get<std::string>().substr(0, 64);
      return true;
    }
    case MarkerType::kBye: {
      if (!OptionalSteps(j, m, error)) return false;
      auto ex = j.find("exception");
      if (ex != j.end() && ex->is_string()) m->exception = ex->get<std::string>().substr(0, 128);
      auto msg = j.find("message");
      if (msg != j.end() && msg->is_string()) m->message = msg->get<std::string>().substr(0, 512);
      return true;
    }
    case MarkerType::kTensorboardLogDir: {
      auto dir = j.find("log_dir");
      if (dir == j.end() || !dir->is_string() || dir->get_ref<const std::string&>().empty() ||
          dir->get_ref<const std::string&>()[0] != '/' ||
          dir->get_ref<const std::string&>().size() > kMaxLogDirBytes) {
        return Fail(error, "tensorboard_log_dir needs \"log_dir\": an absolute path");
      }
      m->log_dir = dir->get<std::string>();
      return true;
    }
    case MarkerType::kStacks:
      if (!j.contains("signal") ||
          !WholeIn(j, "signal", kStacksSignalMin, kStacksSignalMax, &m->signal, error)) {
        return Fail(error, fmt::format("stacks needs \"signal\": a real-time signal from {} to {}",
                                       kStacksSignalMin, kStacksSignalMax));
      }
      return true;
    case MarkerType::kRequest: {
      auto what = j.find("what");
      if (what == j.end() || !what->is_string() ||
          (what->get_ref<const std::string&>() != "stacks" &&
           what->get_ref<const std::string&>() != "profile")) {
        return Fail(error, "request needs \"what\": \"stacks\" or \"profile\"");
      }
      m->what = what->get<std::string>();
      if (!RequestId(j, m, error)) return false;
      if (!OptionalSteps(j, m, error) || !WholeIn(j, "target", -1, kMaxRank, &m->target, error)) {
        return false;
      }
      return true;
    }
    case MarkerType::kProfile: {
      auto reason = j.find("reason");
      auto dir = j.find("dir");
      if (reason == j.end() || !reason->is_string() ||
          !IsName(reason->get_ref<const std::string&>()) || dir == j.end() || !dir->is_string() ||
          !IsName(dir->get_ref<const std::string&>()) ||
          dir->get_ref<const std::string&>()[0] == '/' ||
          dir->get_ref<const std::string&>().find("..") != std::string::npos) {
        return Fail(error, "profile needs \"reason\" and \"dir\" (a path under the run directory)");
      }
      m->reason = reason->get<std::string>();
      m->dir = dir->get<std::string>();
      if (j.contains("id") && !RequestId(j, m, error)) return false;
      if (!OptionalSteps(j, m, error)) return false;
      m->seconds = Number(j, "seconds");
      if (m->seconds && *m->seconds < 0) return Fail(error, "\"seconds\" must be >= 0");
      return true;
    }
  }
  return true;
}

}  // namespace

std::span<const AllocatorField> AllocatorFields() { return kAllocatorFields; }

namespace {

std::string DirOf(std::string_view socket_path) {
  size_t slash = socket_path.rfind('/');
  return slash == std::string_view::npos ? "." : std::string(socket_path.substr(0, slash));
}

constexpr std::string_view kStacksPrefix = "stacks-";

}  // namespace

std::string StepsPathFor(std::string_view socket_path) {
  return DirOf(socket_path) + "/" + kStepsFileName;
}

std::string RequestPathFor(std::string_view socket_path) {
  return DirOf(socket_path) + "/" + kRequestFileName;
}

std::string StacksPathFor(std::string_view socket_path, int pid) {
  return fmt::format("{}/{}{}", DirOf(socket_path), kStacksPrefix, pid);
}

void RemoveStacksFiles(const std::string& dir) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().filename().string().starts_with(kStacksPrefix)) {
      std::filesystem::remove(entry.path(), ec);
    }
  }
}

std::string_view MarkerTypeName(MarkerType type) {
  for (const auto& [t, name] : kTypeNames) {
    if (t == type) return name;
  }
  return "";
}

std::string EncodeMarker(const Marker& m) {
  std::string out;
  out.reserve(160);
  fmt::format_to(std::back_inserter(out),
                 R"({{"v":{},"type":"{}","pid":{},"rank":{},"slot":{},"t":{:.6f})",
                 kMarkerProtocolVersion, MarkerTypeName(m.type), m.pid, m.rank, m.slot, m.t);
  if (m.epoch) fmt::format_to(std::back_inserter(out), R"(,"epoch":{})", *m.epoch);
  if (m.steps) fmt::format_to(std::back_inserter(out), R"(,"steps":{})", *m.steps);
  if (m.call) fmt::format_to(std::back_inserter(out), R"(,"call":{})", *m.call);
  if (m.wait_s && m.timed_s) {
    fmt::format_to(std::back_inserter(out), R"(,"wait_s":{:.6f},"timed_s":{:.6f})", *m.wait_s,
                   *m.timed_s);
  }
  if (m.planned_epochs) {
    fmt::format_to(std::back_inserter(out), R"(,"epochs":{})", *m.planned_epochs);
  }
  if (!m.phase.empty()) out += ",\"phase\":" + nlohmann::json(m.phase).dump();
  if (!m.framework.empty()) {
    out += ",\"framework\":" + nlohmann::json(m.framework).dump();
  }
  if (!m.log_dir.empty()) out += ",\"log_dir\":" + nlohmann::json(m.log_dir).dump();
  if (m.type == MarkerType::kStacks)
    fmt::format_to(std::back_inserter(out), R"(,"signal":{})", m.signal);
  if (m.type == MarkerType::kRequest) {
    out += ",\"what\":" + nlohmann::json(m.what).dump() + ",\"id\":" + nlohmann::json(m.id).dump();
    if (m.target >= 0) fmt::format_to(std::back_inserter(out), R"(,"target":{})", m.target);
  }
  if (m.type == MarkerType::kProfile) {
    out += ",\"reason\":" + nlohmann::json(m.reason).dump() +
           ",\"dir\":" + nlohmann::json(m.dir).dump();
    if (!m.id.empty()) out += ",\"id\":" + nlohmann::json(m.id).dump();
    if (m.seconds) fmt::format_to(std::back_inserter(out), R"(,"seconds":{:.6f})", *m.seconds);
  }
  if (!m.exception.empty()) {
    out +=
        ",\"exception\":" +
        nlohmann::json(m.exception).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    out += ",\"message\":" +
           nlohmann::json(m.message).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  if (m.type == MarkerType::kScalars) {
    out += ",\"values\":{";
    for (size_t i = 0; i < m.scalars.size(); ++i) {
      if (i > 0) out.push_back(',');
      out += nlohmann::json(m.scalars[i].first).dump();
      out.push_back(':');
      AppendNumber(m.scalars[i].second, &out);
    }
    out.push_back('}');
  }
  if (m.type == MarkerType::kAllocator) {
    out += ",\"devices\":[";
    for (size_t i = 0; i < m.allocator.size(); ++i) {
      const AllocatorFigures& f = m.allocator[i];
      if (i > 0) out.push_back(',');
      fmt::format_to(std::back_inserter(out), R"({{"device":{})", f.device);
      if (!f.uuid.empty()) out += ",\"uuid\":" + nlohmann::json(f.uuid).dump();
      for (const AllocatorField& field : kAllocatorFields) {
        if (!(f.*field.value)) continue;
        fmt::format_to(std::back_inserter(out), R"(,"{}":)", field.name);
        AppendNumber(*(f.*field.value), &out);
      }
      out.push_back('}');
    }
    out.push_back(']');
  }
  out.push_back('}');
  return out;
}

std::optional<Marker> ParseMarker(std::string_view datagram, std::string* error) {
  nlohmann::json j = nlohmann::json::parse(datagram, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    *error = "not a JSON object";
    return std::nullopt;
  }
  auto v = j.find("v");
  if (v == j.end() || !v->is_number_integer()) {
    *error = "no protocol version \"v\"";
    return std::nullopt;
  }
  if (v->get<int64_t>() != kMarkerProtocolVersion) {
    *error =
        fmt::format("protocol version {} (this build reads {})", v->dump(), kMarkerProtocolVersion);
    return std::nullopt;
  }
  auto type = j.find("type");
  if (type == j.end() || !type->is_string()) {
    *error = "no \"type\"";
    return std::nullopt;
  }
  Marker m;
  bool known = false;
  for (const auto& [t, name] : kTypeNames) {
    if (name == type->get_ref<const std::string&>()) {
      m.type = t;
      known = true;
    }
  }
  if (!known) {
    *error = fmt::format("unknown type {}", type->dump());
    return std::nullopt;
  }
  // Every number is checked before it becomes an int: a cast of one out of
  // range is undefined behaviour.
  if (!WholeIn(j, "pid", 0, kMaxPid, &m.pid, error) ||
      !WholeIn(j, "rank", -1, kMaxRank, &m.rank, error) ||
      !WholeIn(j, "slot", -1, static_cast<int64_t>(kStepSlots) - 1, &m.slot, error)) {
    return std::nullopt;
  }
  auto t = Number(j, "t");
  if (!t) {
    *error = "no time \"t\"";
    return std::nullopt;
  }
  m.t = *t;
  if (!ParseBody(j, &m, error)) return std::nullopt;
  return m;
}

}  // namespace tv
