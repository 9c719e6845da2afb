#include "sources/cgroup_ns.h"

#include <algorithm>
#include <deque>
#include <utility>

#include "sources/text.h"

namespace tv {
namespace {

// How many "/.." a path starts with, and whether that is all it is.
std::pair<int, bool> Climbs(std::string_view path) {
  int n = 0;
  while (path.starts_with("/..") && (path.size() == 3 || path[3] == '/')) {
    ++n;
    path.remove_prefix(3);
  }
  return {n, path.empty() || path == "/"};
}

// A cgroup directory's control files ("cgroup.procs", "memory.max") are no
// cgroups to walk into.
bool ControlFile(std::string_view name) {
  for (std::string_view prefix :
       {"cgroup.", "cpu.", "cpuacct.", "cpuset.", "memory.", "io.", "pids.", "hugetlb.", "rdma.",
        "misc.", "blkio.", "devices.", "freezer.", "net_cls.", "net_prio.", "perf_event.",
        "notify_on", "release_agent", "tasks"}) {
    if (name.starts_with(prefix)) return true;
  }
  return false;
}

bool Holds(Env* env, const std::string& dir, int pid, std::string* buf) {
  if (!env->ReadFile((dir + "/cgroup.procs").c_str(), buf).ok()) return false;
  std::string_view rest = *buf;
  while (!rest.empty()) {
    std::optional<uint64_t> p = text::ParseU64(text::Trim(text::NextLine(&rest)));
    if (p && static_cast<int>(*p) == pid) return true;
  }
  return false;
}

// The directory `depth` levels under `top` whose cgroup.procs holds `pid`,
// from `top` ("/a/b"); nullopt when none does.
std::optional<std::string> FindSelf(Env* env, const std::string& top, int depth, int pid) {
  std::deque<std::pair<std::string, int>> queue{{"", 0}};
  std::vector<std::string> names;
  std::string buf;
  while (!queue.empty()) {
    auto [rel, level] = queue.front();
    queue.pop_front();
    if (level == depth) {
      if (Holds(env, top + rel, pid, &buf)) return rel.empty() ? "/" : rel;
      continue;
    }
    names.clear();
    if (!env->ListDir((top + rel).c_str(), &names).ok()) continue;
    std::sort(names.begin(), names.end());
    for (const std::string& name : names) {
      if (ControlFile(name)) continue;
      std::string child = rel;
      (child += '/') += name;
      queue.emplace_back(std::move(child), level + 1);
    }
  }
  return std::nullopt;
}

// The v1 controller a mount's options name (its first), or "" for none.
std::string ControllerOf(const MountInfo& m) {
  std::string_view options = m.super_options;
  while (!options.empty()) {
    size_t comma = options.find(',');
    std::string_view option = options.substr(0, comma);
    options.remove_prefix(comma == std::string_view::npos ? options.size() : comma + 1);
    if (option != "rw" && option != "ro" && !option.empty()) return std::string(option);
  }
  return "";
}

}  // namespace

std::optional<std::string> CgroupPathFrom(std::string_view base, std::string_view rel) {
  std::vector<std::string_view> parts;
  for (std::string_view whole : {base, rel}) {
    while (!whole.empty()) {
      size_t slash = whole.find('/');
      std::string_view part = whole.substr(0, slash);
      whole.remove_prefix(slash == std::string_view::npos ? whole.size() : slash + 1);
      if (part.empty() || part == ".") continue;
      if (part != "..") {
        parts.push_back(part);
      } else if (parts.empty()) {
        return std::nullopt;
      } else {
        parts.pop_back();
      }
    }
  }
  std::string out;
  for (std::string_view part : parts) (out += '/') += part;
  return out.empty() ? "/" : out;
}

CgroupNamespace::CgroupNamespace(Env* env, std::vector<MountInfo>* mounts, int self_pid) {
  for (const MountInfo& m : *mounts) {
    if (m.fs_type != "cgroup" && m.fs_type != "cgroup2") continue;
    auto [depth, whole] = Climbs(m.root);
    if (depth == 0) continue;
    private_ = true;
    Root root{.v2 = m.fs_type == "cgroup2", .controller = ControllerOf(m), .path = {}};
    bool known = std::any_of(roots_.begin(), roots_.end(), [&](const Root& r) {
      return r.v2 == root.v2 && r.controller == root.controller;
    });
    if (known || !whole) continue;  // a mount of part of the tree: not walked
    std::optional<std::string> self = FindSelf(env, m.mount_point, depth, self_pid);
    if (!self) continue;
    root.path = *self;
    roots_.push_back(std::move(root));
  }
  // Each mount of a hierarchy whose root was found, from the whole tree's root.
  for (MountInfo& m : *mounts) {
    if (m.fs_type != "cgroup" && m.fs_type != "cgroup2") continue;
    bool v2 = m.fs_type == "cgroup2";
    std::string name = v2 ? "cgroup2" : ControllerOf(m);
    bool found = std::any_of(roots_.begin(), roots_.end(), [&](const Root& r) {
      return r.v2 == v2 && (v2 || HasOption(m.super_options, r.controller));
    });
    if (!found && Climbs(m.root).first > 0 &&
        std::find(unresolved_.begin(), unresolved_.end(), name) == unresolved_.end()) {
      unresolved_.push_back(name);
    }
    for (const Root& r : roots_) {
      if (r.v2 != (m.fs_type == "cgroup2") || (!r.v2 && !HasOption(m.super_options, r.controller)))
        continue;
      if (std::optional<std::string> whole = CgroupPathFrom(r.path, m.root)) m.root = *whole;
    }
  }
}

const CgroupNamespace::Root* CgroupNamespace::RootOf(const ProcCgroupLine& line) const {
  for (const Root& r : roots_) {
    if (r.v2 ? line.controllers.empty() : HasOption(line.controllers, r.controller)) return &r;
  }
  return nullptr;
}

bool CgroupNamespace::Resolve(ProcCgroupLine* line) const {
  if (!private_) return true;
  // In the namespace, every path is from its root: those inside it too.
  const Root* root = RootOf(*line);
  if (root == nullptr) return !line->path.starts_with("/..");
  std::optional<std::string> whole = CgroupPathFrom(root->path, line->path);
  if (!whole) return false;
  line->path = std::move(*whole);
  return true;
}

}  // namespace tv
