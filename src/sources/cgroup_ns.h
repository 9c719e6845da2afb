// CgroupNamespace: `serve` in a private cgroup namespace (a container's, the
// default on cgroup v2). There the kernel shows the cgroup of a process
// outside the namespace, in /proc/PID/cgroup, and the root of a cgroup mount,
// in mountinfo, relative to the namespace's root ("/../../kubepods.slice/..."),
// which names no directory. The root's place in each hierarchy is found once:
// in a mount of the hierarchy's whole tree (the host's /sys/fs/cgroup mounted
// into the container; its root reads "/../.."), the directory as many levels
// down as the root climbs whose cgroup.procs holds the agent. Paths are then
// made whole again, from that mount's root.
//
// Thread safety: not thread-safe; built and used on the sampler thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/env.h"
#include "sources/cgroup.h"
#include "sources/mountinfo.h"

namespace tv {

// `rel` ("/../x", as the kernel writes a path relative to a namespace's root)
// from `base` ("/a/b"): "/a/x"; nullopt when it climbs above "/".
std::optional<std::string> CgroupPathFrom(std::string_view base, std::string_view rel);

class CgroupNamespace {
 public:
  // Finds the namespace's root in each hierarchy whose mount's root climbs,
  // and rewrites the roots of that hierarchy's mounts from it (nothing is
  // read in the host's namespace). `self_pid` is the agent, as /proc numbers it.
  CgroupNamespace(Env* env, std::vector<MountInfo>* mounts, int self_pid);

  // Makes `line`'s path whole; false when it climbs and its hierarchy's root
  // was not found (the line then names no directory that can be read).
  bool Resolve(ProcCgroupLine* line) const;
  // Whether the agent is in a namespace of its own.
  bool private_namespace() const { return private_; }
  // The hierarchies whose root was not found ("cgroup2", "memory", ...).
  const std::vector<std::string>& unresolved() const { return unresolved_; }

 private:
  struct Root {
    bool v2 = false;
    std::string controller;  // v1: one controller of the hierarchy ("memory", "name=systemd")
    std::string path;        // the namespace's root, from the whole tree's mount root
  };
  const Root* RootOf(const ProcCgroupLine& line) const;

  std::vector<Root> roots_;
  std::vector<std::string> unresolved_;
  bool private_ = false;
};

}  // namespace tv
