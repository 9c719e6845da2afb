// trainvitals._core: the C++ core as the Python package sees it. Two objects:
// Client, the training process's end of the marker protocol (its step() is the
// per-step hot path), and Session, the in-process monitor used when no
// `trainvitals run` supervises the script. Python adds only framework glue.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>

#include "core/config.h"
#include "markers/client.h"
#include "run/session.h"

namespace py = pybind11;
using namespace pybind11::literals;

namespace tv {
namespace {

std::optional<double> Figure(const py::dict& d, std::string_view key) {
  py::str name(key.data(), key.size());
  if (!d.contains(name)) return std::nullopt;
  py::object v = d[name];
  if (v.is_none()) return std::nullopt;
  return v.cast<double>();
}

std::vector<AllocatorFigures> ToFigures(const py::list& devices) {
  std::vector<AllocatorFigures> out;
  for (const py::handle& h : devices) {
    auto d = h.cast<py::dict>();
    AllocatorFigures f;
    f.device = d["device"].cast<int>();
    if (d.contains("uuid") && !d["uuid"].is_none()) f.uuid = py::str(d["uuid"]).cast<std::string>();
    for (const AllocatorField& field : AllocatorFields()) f.*field.value = Figure(d, field.name);
    out.push_back(f);
  }
  return out;
}

// A Config from the same option table as the CLI (keys as in the config file:
// "interval", "out", ...). Throws ConfigError for an unknown key, a bad value
// or a bad combination.
Config ConfigFrom(const std::map<std::string, std::string>& options) {
  Config config;
  for (const auto& [key, value] : options) {
    const OptionDef* def = FindOptionByKey(key);
    if (def == nullptr) throw ConfigError("trainvitals: unknown option '" + key + "'");
    def->set(config, value);
  }
  Validate(config);
  return config;
}

// A Session over the running process itself.
class InProcessSession {
 public:
  explicit InProcessSession(const std::map<std::string, std::string>& options) {
    std::vector<std::string> command = Command();
    session_ = std::make_unique<Session>(ConfigFrom(options), command, "python");
  }
  std::string Start() {
    session_->Start(static_cast<int>(::getpid()));
    return session_->marker_socket();
  }
  std::string run_dir() const { return session_->run_dir(); }
  // Stops sampling, writes summary.json; returns it as JSON text.
  std::string Finish() {
    if (!session_) return "{}";
    std::string text = session_->Finish(std::nullopt, std::nullopt).dump();
    session_.reset();
    return text;
  }

 private:
  static std::vector<std::string> Command() {
    std::vector<std::string> out;
    py::list argv = py::module_::import("sys").attr("argv");
    py::object exe = py::module_::import("sys").attr("executable");
    out.push_back(exe.cast<std::string>());
    for (const py::handle& a : argv) out.push_back(a.cast<std::string>());
    return out;
  }
  std::unique_ptr<Session> session_;
};

}  // namespace
}  // namespace tv

PYBIND11_MODULE(_core, m) {
  using tv::MarkerClient;
  m.doc() = "trainvitals core: marker client and in-process monitor";
  m.attr("__version__") = TRAINVITALS_VERSION;
  m.attr("SOCKET_ENV") = tv::kMarkerSocketEnv;
  py::register_exception<tv::ConfigError>(m, "ConfigError", PyExc_ValueError);

  py::class_<MarkerClient>(m, "Client")
      .def(py::init<const std::string&, int, std::string>(), "socket_path"_a, "rank"_a = -1,
           "framework"_a = "")
      .def_property_readonly("ok", &MarkerClient::ok)
      .def_property_readonly("error", &MarkerClient::error)
      .def_property_readonly("rank", &MarkerClient::rank)
      .def_property_readonly("slot", &MarkerClient::slot)
      .def_property_readonly("steps", &MarkerClient::steps)
      .def_property_readonly("sent", &MarkerClient::sent)
      .def_property_readonly("dropped", &MarkerClient::dropped)
      .def("step", &MarkerClient::Step, "step"_a = -1,
           "Counts one step; True when allocator figures are due.")
      .def("epoch_begin", &MarkerClient::EpochBegin, "epoch"_a, "call"_a = 0)
      .def("epoch_end", &MarkerClient::EpochEnd, "epoch"_a)
      .def("phase_begin", &MarkerClient::PhaseBegin, "phase"_a)
      .def("phase_end", &MarkerClient::PhaseEnd, "phase"_a)
      .def("scalars", &MarkerClient::Scalars, "values"_a)
      .def("tensorboard_log_dir", &MarkerClient::TensorboardLogDir, "log_dir"_a)
      .def(
          "allocator",
          [](MarkerClient& c, const py::list& devices) {
            return c.Allocator(tv::ToFigures(devices));
          },
          "devices"_a)
      .def("close", &MarkerClient::Close, "exception"_a = "", "message"_a = "");

  m.def(
      "check_options",
      [](const std::map<std::string, std::string>& options) { tv::ConfigFrom(options); },
      "options"_a, "Raises ConfigError for an unknown option, a bad value or combination.");

  py::class_<tv::InProcessSession>(m, "Session")
      .def(py::init<const std::map<std::string, std::string>&>(), "options"_a)
      .def("start", &tv::InProcessSession::Start,
           "Starts the sampler thread; returns the marker socket.")
      .def_property_readonly("run_dir", &tv::InProcessSession::run_dir)
      .def("finish", &tv::InProcessSession::Finish, py::call_guard<py::gil_scoped_release>());
}
