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
#include "markers/risk.h"
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

// The latest memory risk `client` has not read, as the glue hands it to
// on_oom_risk (docs/markers.md); None when none came.
py::object TakeRisk(MarkerClient& client) {
  std::optional<MemoryRisk> risk = client.TakeRisk();
  if (!risk) return py::none();
  auto optional = [](const auto& v) { return v ? py::cast(*v) : py::none(); };
  return py::dict("kind"_a = std::string(RiskKindId(risk->kind)),
                  "gpu"_a = risk->gpu >= 0 ? py::cast(risk->gpu) : py::none(),
                  "seconds_left"_a = optional(risk->seconds_left),
                  "epoch"_a = optional(risk->epoch),
                  "planned_epochs"_a = optional(risk->planned_epochs),
                  "growth_bytes_per_second"_a = risk->growth_bytes_per_second,
                  "message"_a = DescribeRisk(*risk, client.seconds_per_epoch()));
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
    std::string text = RunSummaryJson(session_->Finish(std::nullopt, std::nullopt)).dump();
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

// DataIterator: `for batch in m.data(loader)` times each next() of the
// wrapped iterator as data wait (WaitBegin before, WaitEnd after). A plain
// CPython type whose tp_iternext is the whole per-item cost: no pybind11
// dispatch, no Python frame. The wrapped iterator's exceptions, StopIteration
// included, pass through unchanged; exhaustion leaves the timed loop.
struct DataIterator {
  PyObject_HEAD PyObject* iterator;  // owned
  PyObject* client;                  // owned: keeps the MarkerClient alive
  MarkerClient* marker;
  bool waiting;  // a wait began before the first next() (the loader's iter())
};

PyObject* DataIteratorNext(PyObject* self) {
  auto* it = reinterpret_cast<DataIterator*>(self);
  if (!it->waiting) it->marker->WaitBegin();
  it->waiting = false;
  PyObject* item = Py_TYPE(it->iterator)->tp_iternext(it->iterator);
  it->marker->WaitEnd();
  if (item == nullptr) it->marker->WaitPause();
  return item;
}

void DataIteratorDealloc(PyObject* self) {
  auto* it = reinterpret_cast<DataIterator*>(self);
  PyTypeObject* type = Py_TYPE(self);
  Py_XDECREF(it->iterator);
  Py_XDECREF(it->client);
  type->tp_free(self);
  Py_DECREF(type);
}

PyType_Slot kDataIteratorSlots[] = {
    {Py_tp_iter, reinterpret_cast<void*>(PyObject_SelfIter)},
    {Py_tp_iternext, reinterpret_cast<void*>(DataIteratorNext)},
    {Py_tp_dealloc, reinterpret_cast<void*>(DataIteratorDealloc)},
    {Py_tp_doc, const_cast<char*>("An iterator that times each next() as data wait.")},
    {0, nullptr}};

PyType_Spec kDataIteratorSpec = {"trainvitals._core.DataIterator", sizeof(DataIterator), 0,
                                 Py_TPFLAGS_DEFAULT, kDataIteratorSlots};

// A DataIterator over iter(`iterable`) that times through `client`; `waiting`:
// the caller began the wait for the first item (WaitBegin) already.
py::object MakeDataIterator(const py::handle& type, py::object client, const py::handle& iterable,
                            bool waiting) {
  MarkerClient* marker = client.cast<MarkerClient*>();
  py::iterator inner = py::iter(iterable);
  if (Py_TYPE(inner.ptr())->tp_iternext == nullptr) throw py::type_error("not an iterator");
  auto* tp = reinterpret_cast<PyTypeObject*>(type.ptr());
  PyObject* self = tp->tp_alloc(tp, 0);
  if (self == nullptr) throw py::error_already_set();
  auto* it = reinterpret_cast<DataIterator*>(self);
  it->iterator = inner.release().ptr();
  it->client = client.release().ptr();
  it->marker = marker;
  it->waiting = waiting;
  return py::reinterpret_steal<py::object>(self);
}

// wait_calls(client): wait_begin and wait_end of one client as
// plain builtin functions (METH_NOARGS, bound to a capsule that holds the
// client): a call from Python costs a fraction of a pybind11 method call, which
// matters on the per-step path of the framework hooks.
constexpr char kClientCapsule[] = "trainvitals._core.ClientCapsule";

MarkerClient* ClientOf(PyObject* capsule) {
  return static_cast<MarkerClient*>(PyCapsule_GetPointer(capsule, kClientCapsule));
}
PyObject* WaitBeginCall(PyObject* capsule, PyObject*) {
  ClientOf(capsule)->WaitBegin();
  Py_RETURN_NONE;
}
PyObject* WaitEndCall(PyObject* capsule, PyObject*) {
  ClientOf(capsule)->WaitEnd();
  Py_RETURN_NONE;
}
PyMethodDef kWaitCalls[] = {
    {"wait_begin", WaitBeginCall, METH_NOARGS, "The process begins waiting for its next batch."},
    {"wait_end", WaitEndCall, METH_NOARGS, "The batch came: the wait counts as data wait."}};

py::tuple WaitCalls(py::object client) {
  MarkerClient* marker = client.cast<MarkerClient*>();
  PyObject* capsule = PyCapsule_New(marker, kClientCapsule, [](PyObject* self) {
    Py_XDECREF(static_cast<PyObject*>(PyCapsule_GetContext(self)));
  });
  if (capsule == nullptr) throw py::error_already_set();
  auto holder = py::reinterpret_steal<py::object>(capsule);
  PyCapsule_SetContext(capsule, client.release().ptr());  // the capsule keeps the client alive
  py::tuple out(2);
  for (size_t i = 0; i < 2; ++i) {
    PyObject* f = PyCFunction_New(&kWaitCalls[i], capsule);
    if (f == nullptr) throw py::error_already_set();
    out[i] = py::reinterpret_steal<py::object>(f);
  }
  return out;
}

}  // namespace
}  // namespace tv

PYBIND11_MODULE(_core, m) {
  using tv::MarkerClient;
  m.doc() = "trainvitals core: marker client and in-process monitor";
  m.attr("__version__") = TRAINVITALS_VERSION;
  m.attr("SOCKET_ENV") = tv::kMarkerSocketEnv;
  m.attr("RUN_DIR_ENV") = tv::kRunDirEnv;
  m.attr("STEP_ALLOCATOR_DUE") = tv::kStepAllocatorDue;
  m.attr("STEP_RISK_CHANGED") = tv::kStepRiskChanged;
  m.attr("STEP_REQUEST") = tv::kStepRequest;
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
           "Counts one step; returns flags: STEP_ALLOCATOR_DUE | STEP_RISK_CHANGED.")
      .def_property_readonly("risk_changed", &MarkerClient::risk_changed)
      .def("risk", &tv::TakeRisk,
           "The latest memory risk not read yet, as a dict; None when none came.")
      .def("epoch_begin", &MarkerClient::EpochBegin, "epoch"_a, "call"_a = 0, "epochs"_a = 0)
      .def("epoch_end", &MarkerClient::EpochEnd, "epoch"_a)
      .def("phase_begin", &MarkerClient::PhaseBegin, "phase"_a)
      .def("phase_end", &MarkerClient::PhaseEnd, "phase"_a)
      .def("scalars", &MarkerClient::Scalars, "values"_a)
      .def("tensorboard_log_dir", &MarkerClient::TensorboardLogDir, "log_dir"_a)
      .def("request", &MarkerClient::TakeRequest,
           "The latest request not read yet (JSON text); empty when none came.")
      .def("profiled", &MarkerClient::Profiled, "reason"_a, "id"_a, "dir"_a, "steps"_a, "seconds"_a,
           "Says the profile was taken into `dir` (under the run directory).")
      .def_property_readonly("stacks_path", &MarkerClient::stacks_path)
      .def_static("free_stacks_signal", &MarkerClient::FreeStacksSignal,
                  "A real-time signal with no handler for the stacks; 0 when none.")
      .def("offer_stacks", &MarkerClient::OfferStacks, "signal"_a,
           "Says that `signal` (its handler installed) writes the stacks to stacks_path.")
      .def(
          "allocator",
          [](MarkerClient& c, const py::list& devices) {
            return c.Allocator(tv::ToFigures(devices));
          },
          "devices"_a)
      .def("wait_begin", &MarkerClient::WaitBegin,
           "The process begins waiting for its next batch (no syscall).")
      .def("wait_end", &MarkerClient::WaitEnd,
           "The batch came: the time since wait_begin() counts as data wait.")
      .def("wait_add", &MarkerClient::WaitAdd, "ns"_a,
           "A wait measured elsewhere (a producer thread's batch), over by now, counts.")
      .def("wait_pause", &MarkerClient::WaitPause,
           "The process leaves its timed loop: a pending wait is dropped.")
      .def_property_readonly("wait_ns", &MarkerClient::wait_ns)
      .def("close", &MarkerClient::Close, "exception"_a = "", "message"_a = "");

  py::object data_iterator_type =
      py::reinterpret_steal<py::object>(PyType_FromSpec(&tv::kDataIteratorSpec));
  if (!data_iterator_type) throw py::error_already_set();
  m.attr("DataIterator") = data_iterator_type;  // holds the type for the module's life
  py::handle type = data_iterator_type;
  m.def(
      "data_iterator",
      [type](py::object client, const py::handle& iterable, bool waiting) {
        return tv::MakeDataIterator(type, std::move(client), iterable, waiting);
      },
      "client"_a, "iterable"_a, "waiting"_a = false,
      "An iterator over `iterable` that times each next() as data wait through `client`; "
      "`waiting`: a wait for the first item began already.");

  m.def("wait_calls", &tv::WaitCalls, "client"_a,
        "(wait_begin, wait_end) of `client` as plain functions, the cheapest to call.");
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
