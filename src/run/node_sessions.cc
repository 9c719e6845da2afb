#include "run/node_sessions.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <optional>

#include "core/metrics.h"
#include "core/unique_fd.h"
#include "store/live_record.h"

namespace tv {
namespace {

// The directory `name` in `parent`, opened without following a link, when it
// is `uid`'s and nobody else may write it (nor, when `private_dir`, read it).
int OpenDirOf(int parent, const char* name, uid_t uid, bool private_dir) {
  int fd = ::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st {};
  mode_t others = private_dir ? 077 : 022;
  if (fd >= 0 && (::fstat(fd, &st) != 0 || st.st_uid != uid || (st.st_mode & others) != 0)) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::vector<std::string> NamesIn(int dir_fd) {
  std::vector<std::string> names;
  int fd = ::dup(dir_fd);
  DIR* dir = fd >= 0 ? ::fdopendir(fd) : nullptr;
  if (dir == nullptr) {
    if (fd >= 0) ::close(fd);
    return names;
  }
  while (const dirent* e = ::readdir(dir)) {
    if (e->d_name[0] != '.') names.emplace_back(e->d_name);
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

// The text of `name` in `dir_fd` when it is a regular file of `uid`'s, whole
// and at most `max` bytes.
std::optional<std::string> ReadOwnFile(int dir_fd, const std::string& name, uid_t uid, size_t max) {
  UniqueFd fd(::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat st {};
  if (!fd.ok() || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != uid ||
      static_cast<size_t>(st.st_size) > max) {
    return std::nullopt;
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < text.size()) {
    ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  text.resize(got);
  return text;
}

std::optional<uid_t> UidIn(std::string_view text) {
  uid_t uid = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), uid);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return uid;
}

JobSession SessionOf(const LiveRecord& r) {
  JobSession s;
  s.pid = r.identity.pid;
  s.name = r.identity.name;
  s.mode = r.identity.mode;
  s.health_score = r.health_score;
  for (const LiveRecord::Finding& f : r.findings) {
    s.findings.emplace_back(f.id, std::string(SeverityName(f.severity)));
  }
  const Totals& row = r.row.run;
  s.epoch = row.Value(metric::kTrainingEpoch);
  s.step = row.Value(metric::kTrainingStep);
  s.steps_per_second = row.Value(metric::kTrainingStepsPerSecond);
  s.data_wait_ratio = row.Value(metric::kTrainingDataWaitRatio);
  return s;
}

bool InContainer(const JobIdentity& id) {
  return id.kind == "kubernetes" || id.kind == "docker" || id.kind == "podman" ||
         id.kind == "containerd" || id.kind == "crio";
}

// The sessions directory base/shared[/runtime]/own/sessions, opened through
// the user's own directories (each checked to be `uid`'s).
int OpenSessions(const std::string& base, const std::string& shared, const std::string& runtime,
                 const std::string& own, uid_t uid) {
  UniqueFd root(::open(base.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  UniqueFd dir(root.ok() ? ::openat(root.get(), shared.c_str(),
                                    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                         : -1);
  UniqueFd user(dir.ok() && !runtime.empty() ? OpenDirOf(dir.get(), runtime.c_str(), uid, false)
                                             : -1);
  int parent = runtime.empty() ? dir.get() : user.get();
  UniqueFd mine(parent >= 0 ? OpenDirOf(parent, own.c_str(), uid, true) : -1);
  return mine.ok() ? OpenDirOf(mine.get(), "sessions", uid, true) : -1;
}

}  // namespace

void NodeSessionsSource::Discover(const std::string& base, const std::string& job,
                                  std::vector<Place>* out) {
  auto add = [&](Place p) {
    UniqueFd sessions(OpenSessions(p.base, p.shared, p.runtime, p.own, p.uid));
    if (sessions.ok()) out->push_back(std::move(p));
  };
  UniqueFd root(::open(base.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root.ok()) return;
  UniqueFd users(::openat(root.get(), "run/user", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  for (const std::string& name : users.ok() ? NamesIn(users.get()) : std::vector<std::string>()) {
    if (std::optional<uid_t> uid = UidIn(name)) {
      add(Place{base, "run/user", name, "trainvitals", *uid, job});
    }
  }
  for (const char* shared : {"dev/shm", "tmp"}) {
    UniqueFd dir(::openat(root.get(), shared, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    for (const std::string& name : dir.ok() ? NamesIn(dir.get()) : std::vector<std::string>()) {
      if (!name.starts_with("trainvitals-")) continue;
      if (std::optional<uid_t> uid = UidIn(std::string_view(name).substr(12))) {
        add(Place{base, shared, "", name, *uid, job});
      }
    }
  }
}

void NodeSessionsSource::ReadPlace(const Place& place, double now_t, std::vector<Found>* out) {
  UniqueFd sessions(OpenSessions(place.base, place.shared, place.runtime, place.own, place.uid));
  if (!sessions.ok()) return;
  for (const std::string& file : NamesIn(sessions.get())) {
    if (!file.ends_with(".json")) continue;
    std::optional<std::string> text = ReadOwnFile(sessions.get(), file, place.uid, kMaxFileBytes);
    LiveRecord r;
    if (!text) continue;
    Status read = LiveFromJson(nlohmann::json::parse(*text, nullptr, false), &r);
    if ((!read.ok() && r.identity.pid == 0) || r.identity.pid <= 0) continue;
    if (!r.row_t || now_t - *r.row_t > kStale_s) continue;  // no row yet, or gone
    out->push_back(Found{place.uid, SessionOf(r), r.identity.job_pid});
  }
}

void NodeSessionsSource::Read(const Tick& tick, Sample* out, std::vector<Notice>* notices) {
  (void)notices;
  if (discovered_mono_s_ < 0 || tick.mono_s - discovered_mono_s_ >= kDiscover_s) {
    discovered_mono_s_ = tick.mono_s;
    places_.clear();
    Discover(root_, "", &places_);
    for (const NodeJob& job : out->node_jobs) {
      // A container's file system is its own: the sessions in it are its job's.
      if (!InContainer(*job.identity) || job.pids.empty()) continue;
      Discover(proc_ + "/" + std::to_string(job.pids.front()) + "/root", JobKey(*job.identity),
               &places_);
    }
  }
  for (const Place& place : places_) {
    std::vector<Found> found;
    ReadPlace(place, out->t, &found);
    for (Found& f : found) {
      auto job = std::find_if(out->node_jobs.begin(), out->node_jobs.end(), [&](const NodeJob& j) {
        if (!place.job.empty()) return JobKey(*j.identity) == place.job;
        return !InContainer(*j.identity) &&
               std::binary_search(j.pids.begin(), j.pids.end(), f.job_pid);
      });
      if (job == out->node_jobs.end()) continue;
      // On the host, its job's root process must be the user's own: nobody
      // speaks for another's job.
      struct stat st {};
      std::string proc = proc_ + "/" + std::to_string(f.job_pid);
      if (place.job.empty() && f.uid != 0 &&
          (::stat(proc.c_str(), &st) != 0 || st.st_uid != f.uid)) {
        continue;
      }
      job->sessions.push_back(std::move(f.session));
    }
  }
  for (NodeJob& job : out->node_jobs) {
    std::sort(job.sessions.begin(), job.sessions.end(),
              [](const JobSession& a, const JobSession& b) { return a.pid < b.pid; });
  }
}

}  // namespace tv
