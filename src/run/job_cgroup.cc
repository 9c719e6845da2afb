#include "run/job_cgroup.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <set>

#include "core/env.h"
#include "core/process_gone.h"

namespace tv {
namespace {

std::string_view KindName(JobCgroupPlace::Kind kind) {
  switch (kind) {
    case JobCgroupPlace::Kind::kUnified:
      return "cgroup v2";
    case JobCgroupPlace::Kind::kCpuacct:
      return "cgroup v1 cpuacct";
    case JobCgroupPlace::Kind::kMemory:
      return "cgroup v1 memory";
  }
  return "";
}

// Whether `dir`'s cgroup.procs lists this process: the directory is its own
// cgroup, not a stand-in (another cgroup namespace).
bool HoldsUs(Env* env, const std::string& dir) {
  std::string procs;
  if (!env->ReadFile((dir + "/cgroup.procs").c_str(), &procs).ok()) return false;
  bool listed = false;
  int self = ::getpid();
  ForEachProc(procs, [&](int pid) { listed = listed || pid == self; });
  return listed;
}

constexpr std::string_view kJobCgroupPrefix = "trainvitals-";
constexpr time_t kStaleAfterSeconds = 60;

// The PID a job cgroup's name carries: 0 for any other name.
int NamedOwner(std::string_view name) {
  if (!name.starts_with(kJobCgroupPrefix)) return 0;
  name.remove_prefix(kJobCgroupPrefix.size());
  int pid = 0;
  auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), pid);
  return ec == std::errc() && end == name.data() + name.size() ? pid : 0;
}

std::string Child(const std::string& parent, std::string_view name) {
  return fmt::format("{}/{}", parent == "/" ? "" : parent, name);
}

}  // namespace

int SweepStaleJobCgroups(const std::string& parent, time_t now) {
  std::vector<std::string> names;
  if (!Env::Default()->ListDir(parent.c_str(), &names).ok()) return 0;
  int removed = 0;
  for (const std::string& name : names) {
    int owner = NamedOwner(name);
    if (!ProcessGone(owner)) continue;
    std::string dir = Child(parent, name);
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
        now - st.st_mtime < kStaleAfterSeconds) {
      continue;
    }
    if (::rmdir(dir.c_str()) == 0) ++removed;
  }
  return removed;
}

std::vector<JobCgroupPlace> PlanJobCgroup(const std::vector<MountInfo>& mounts,
                                          const std::vector<ProcCgroupLine>& cgroups) {
  std::vector<JobCgroupPlace> places;
  if (auto d = ResolveCgroupDirIn(2, mounts, cgroups, "")) {
    places.push_back({JobCgroupPlace::Kind::kUnified, d->dir});
  }
  for (auto [kind, controller] : {std::pair{JobCgroupPlace::Kind::kCpuacct, "cpuacct"},
                                  std::pair{JobCgroupPlace::Kind::kMemory, "memory"}}) {
    if (auto d = ResolveCgroupDirIn(1, mounts, cgroups, controller)) {
      places.push_back({kind, d->dir});
    }
  }
  return places;
}

JobCgroup JobCgroup::Make(const std::string& name) {
  JobCgroup out;
  Env* env = Env::Default();
  std::string mountinfo;
  std::string self;
  if (!env->ReadFile("/proc/self/mountinfo", &mountinfo).ok() ||
      !env->ReadFile("/proc/self/cgroup", &self).ok()) {
    out.why_not_ = "/proc/self/mountinfo or /proc/self/cgroup cannot be read";
    return out;
  }
  std::vector<JobCgroupPlace> places =
      PlanJobCgroup(ParseMountInfo(mountinfo), ParseProcCgroup(self));
  std::string failures;
  for (const JobCgroupPlace& place : places) {
    if (!HoldsUs(env, place.parent)) continue;
    std::string dir = Child(place.parent, name);
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      if (!failures.empty()) failures += "; ";
      failures += fmt::format("{}: {}", dir, std::strerror(errno));
      continue;
    }
    bool unified = place.kind == JobCgroupPlace::Kind::kUnified;
    out.made_.push_back({place.kind, dir, dir + (unified ? "/cgroup.procs" : "/tasks")});
    if (unified)
      out.unified_fd_ = UniqueFd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  }
  if (out.made_.empty()) {
    out.why_not_ = places.empty()     ? "no cgroup hierarchy is mounted for this process"
                   : failures.empty() ? "this process's cgroup directories are not visible"
                                      : "cannot make one: " + failures;
  }
  return out;
}

JobCgroup::~JobCgroup() { (void)Remove(); }

unsigned JobCgroup::unified_bit() const {
  for (size_t i = 0; i < made_.size(); ++i) {
    if (made_[i].kind == JobCgroupPlace::Kind::kUnified) return 1U << i;
  }
  return 0;
}

unsigned JobCgroup::EnterFromChild(unsigned entered) const noexcept {
  for (size_t i = 0; i < made_.size(); ++i) {
    if (entered & (1U << i)) continue;
    int fd = ::open(made_[i].enter.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) continue;
    if (::write(fd, "0", 1) == 1) entered |= 1U << i;
    ::close(fd);
  }
  return entered;
}

void JobCgroup::Entered(unsigned entered) {
  std::vector<Made> kept;
  std::string refused;
  for (size_t i = 0; i < made_.size(); ++i) {
    if (entered & (1U << i)) {
      kept.push_back(std::move(made_[i]));
      continue;
    }
    if (!refused.empty()) refused += ", ";
    refused += KindName(made_[i].kind);
    ::rmdir(made_[i].dir.c_str());
  }
  made_ = std::move(kept);
  unified_fd_.reset();
  if (made_.empty() && !refused.empty()) {
    why_not_ = "the command could not enter the cgroup made for it (" + refused + ")";
  }
}

JobCgroupView JobCgroup::view() const {
  JobCgroupView view{.why_not = why_not_};
  JobCgroupDirs& d = view.dirs;
  for (const Made& m : made_) {
    switch (m.kind) {
      case JobCgroupPlace::Kind::kUnified:
        d.unified = m.dir;
        break;
      case JobCgroupPlace::Kind::kCpuacct:
        d.cpuacct = m.dir;
        break;
      case JobCgroupPlace::Kind::kMemory:
        d.memory = m.dir;
        break;
    }
  }
  return view;
}

std::string JobCgroup::Remove() {
  std::string left;
  std::set<std::string> parents;
  for (const Made& m : made_) {
    parents.insert(m.dir.substr(0, std::max<size_t>(1, m.dir.rfind('/'))));
    if (::rmdir(m.dir.c_str()) == 0 || errno == ENOENT) continue;
    if (!left.empty()) left += ", ";
    left += fmt::format("{} ({})", m.dir,
                        errno == EBUSY ? "processes of the job still in it" : std::strerror(errno));
  }
  for (const std::string& parent : parents) (void)SweepStaleJobCgroups(parent, ::time(nullptr));
  made_.clear();
  unified_fd_.reset();
  return left;
}

}  // namespace tv
