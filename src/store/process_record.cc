#include "store/process_record.h"

#include <cmath>

#include "store/record_json.h"

namespace tv {
namespace {

using OJson = nlohmann::ordered_json;

OJson TopJson(const ProcessRecord& p) {
  OJson j = {{"pid", p.pid}};
  Put(j, "ppid", p.ppid);
  PutText(j, "role", p.role);
  j["name"] = p.name;
  j["command"] = p.command;
  Put(j, "cpu_seconds", p.cpu_seconds);
  if (p.memory_bytes_max) j["memory_bytes_max"] = std::llround(*p.memory_bytes_max);
  if (p.rss_bytes_max) j["rss_bytes_max"] = std::llround(*p.rss_bytes_max);
  Put(j, "exited", p.exited);
  return j;
}

OJson LeakedJson(const ProcessRecord& p) {
  OJson j = {{"pid", p.pid}, {"name", p.name}, {"command", p.command}};
  PutText(j, "role", p.role);
  return j;
}

OJson ListJson(const std::vector<ProcessRecord>& list, OJson (*one)(const ProcessRecord&)) {
  OJson out = OJson::array();
  for (const ProcessRecord& p : list) out.push_back(one(p));
  return out;
}

template <typename Json>
void ReadProcess(RecordFields<Json>& f, ProcessRecord* p) {
  f.Whole("pid", &p->pid);
  f.Whole("ppid", &p->ppid);
  f.Text("role", &p->role);
  f.Text("name", &p->name);
  f.Text("command", &p->command);
  f.Number("cpu_seconds", &p->cpu_seconds);
  f.Number("memory_bytes_max", &p->memory_bytes_max);
  f.Number("rss_bytes_max", &p->rss_bytes_max);
  f.Bool("exited", &p->exited);
}

template <typename Json>
Status ReadProcesses(const Json& summary, RunProcesses* out) {
  *out = RunProcesses{};
  std::string error;
  RecordFields<Json> f(summary, "", &error, RecordReading::kKeepGoing);
  if (!f.Object()) return Status::Invalid(error);
  auto list = [](std::vector<ProcessRecord>* into) {
    return [into](RecordFields<Json>& p) { ReadProcess(p, &into->emplace_back()); };
  };
  TopProcesses top;
  if (f.Member("processes", [&](RecordFields<Json>& p) {
        p.Objects("by_cpu", list(&top.by_cpu));
        p.Objects("by_memory", list(&top.by_memory));
      })) {
    out->top = std::move(top);
  }
  if (f.Find("leaked") != nullptr) {
    std::vector<ProcessRecord> leaked;
    f.Objects("leaked", list(&leaked));
    out->leaked = std::move(leaked);
  }
  ExceptionRecord e;
  if (f.Member("exception", [&](RecordFields<Json>& x) {
        x.Text("type", &e.type);
        x.Text("message", &e.message);
        x.Whole("pid", &e.pid);
        x.Whole("rank", &e.rank);
      })) {
    out->exception = std::move(e);
  }
  return ReadingStatus(error);
}

}  // namespace

void PutProcesses(const RunProcesses& processes, OJson* summary) {
  OJson& s = *summary;
  if (processes.top) {
    s["processes"] = {{"by_cpu", ListJson(processes.top->by_cpu, TopJson)},
                      {"by_memory", ListJson(processes.top->by_memory, TopJson)}};
  }
  if (processes.leaked) s["leaked"] = ListJson(*processes.leaked, LeakedJson);
  if (const std::optional<ExceptionRecord>& e = processes.exception) {
    OJson j = {{"type", e->type}, {"message", e->message}};
    Put(j, "pid", e->pid);
    Put(j, "rank", e->rank);
    s["exception"] = std::move(j);
  }
}

Status ProcessesFromSummary(const nlohmann::json& summary, RunProcesses* out) {
  return ReadProcesses(summary, out);
}
Status ProcessesFromSummary(const OJson& summary, RunProcesses* out) {
  return ReadProcesses(summary, out);
}

}  // namespace tv
