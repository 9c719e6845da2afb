#include "run/session_request.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/clock.h"
#include "core/process_gone.h"
#include "markers/client.h"
#include "markers/protocol.h"
#include "run/live_dir.h"
#include "store/event_line.h"
#include "store/marker_event_record.h"

namespace tv {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxAncestors = 64;

std::vector<LiveIdentity> LiveSessions(std::string* error) {
  std::vector<LiveIdentity> out;
  std::string dir = LiveSessionsDir(false, error);
  if (dir.empty()) return out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    LiveRecord r;
    if (j.is_discarded() || !LiveFromJson(j, &r).ok()) continue;
    // Killed before it could remove its announcement.
    if (r.identity.pid <= 0 || ProcessGone(r.identity.pid)) continue;
    out.push_back(std::move(r.identity));
  }
  return out;
}

int ParentOf(int pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return 0;
  int state_end = static_cast<int>(paren) + 3;  // ") S "
  return state_end < static_cast<int>(stat.size()) ? std::atoi(stat.c_str() + state_end) : 0;
}

bool SamePath(const std::string& a, const std::string& b) {
  std::error_code ec;
  return fs::equivalent(a, b, ec) && !ec;
}

// The `stacks` and `profile` events of request `id` in the events.jsonl text
// from `offset` on, complete lines only; moves `offset` past them.
void ReadAnswers(const std::string& path, const std::string& id, std::streamoff* offset,
                 std::vector<TrainingEvent>* out) {
  std::ifstream in(path);
  in.seekg(*offset);
  std::string line;
  while (std::getline(in, line)) {
    if (in.eof()) break;  // no newline yet: written in part
    *offset += static_cast<std::streamoff>(line.size() + 1);
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    TrainingEvent e;
    if (j.is_discarded() || !MarkerEventFromJson(j, &e)) continue;
    const std::string* request = e.stacks    ? &e.stacks->request
                                 : e.profile ? &e.profile->request
                                             : nullptr;
    if (request == nullptr || *request != id) continue;
    out->push_back(std::move(e));
  }
}

}  // namespace

Status FindLiveSession(const std::string& target, LiveIdentity* out) {
  std::string error;
  std::vector<LiveIdentity> sessions = LiveSessions(&error);
  if (sessions.empty()) {
    return Status::NotFound(error.empty() ? "no trainvitals session is running for this user"
                                          : error);
  }
  int pid = 0;
  bool number = !target.empty() && target.find_first_not_of("0123456789") == std::string::npos;
  if (number) pid = std::atoi(target.c_str());
  for (int p = pid, up = 0; number && p > 1 && up < kMaxAncestors; p = ParentOf(p), ++up) {
    for (const LiveIdentity& s : sessions) {
      if (s.pid == p || s.job_pid == p) return *out = s, Status::Ok();
    }
  }
  for (const LiveIdentity& s : sessions) {
    if (!number && SamePath(target, s.run_dir)) return *out = s, Status::Ok();
  }
  std::string running;
  for (const LiveIdentity& s : sessions) {
    running += fmt::format("\n  {} (pid {}, job {}): {}", s.name, s.pid, s.job_pid, s.run_dir);
  }
  return Status::NotFound(fmt::format(
      "{} is {} of no running session; these run:{}",
      number ? fmt::format("PID {}", target) : target,
      number ? "neither the monitor, the job nor a process under the job" : "the run directory",
      running));
}

Status AskSession(const LiveIdentity& session, Marker m, double wait_s, double settle_s,
                  std::vector<TrainingEvent>* out) {
  if (session.socket.empty()) {
    return Status::Unavailable(fmt::format(
        "the session {} (pid {}) takes no requests: it records no markers (attach), or it is "
        "older than this command",
        session.name, session.pid));
  }
  std::string events = session.run_dir + "/events.jsonl";
  std::error_code ec;
  auto offset = static_cast<std::streamoff>(fs::file_size(events, ec));
  if (ec) offset = 0;
  m.type = MarkerType::kRequest;
  m.pid = static_cast<int>(::getpid());
  m.t = Clock::Default()->WallSeconds();
  m.id = fmt::format("{}-{}", m.pid, static_cast<int64_t>(m.t * 1000));
  std::string error;
  if (!SendMarker(session.socket, m, &error)) return Status::Unavailable(error);
  double waited = 0;
  double settle = -1;
  constexpr double kStep_s = 0.1;
  while (waited < wait_s) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    waited += kStep_s;
    size_t before = out->size();
    ReadAnswers(events, m.id, &offset, out);
    if (out->size() > before) settle = waited + settle_s;
    if (settle > 0 && waited >= settle) return Status::Ok();
  }
  if (!out->empty()) return Status::Ok();
  return Status::NotFound(fmt::format("nothing came within {:.0f} s", wait_s));
}

}  // namespace tv
