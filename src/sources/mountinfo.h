// Parser for /proc/PID/mountinfo: where each file system is mounted and which
// part of it the mount shows. The cgroup source finds its hierarchies here
// instead of assuming /sys/fs/cgroup.
//
// Thread safety: pure function, safe from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tv {

struct MountInfo {
  std::string root;           // the directory of the file system shown at mount_point
  std::string mount_point;    // octal escapes (\040 for space) decoded
  std::string fs_type;        // "cgroup", "cgroup2", "ext4", ...
  std::string super_options;  // "rw,cpu,cpuacct" for a cgroup v1 hierarchy
};

// Parses mountinfo lines ("36 35 98:0 /root /mnt rw,noatime master:1 - ext3
// /dev/root rw,errors=continue"); lines without the " - " separator or with too
// few fields are skipped.
std::vector<MountInfo> ParseMountInfo(std::string_view text);

// Whether the comma-separated `options` holds exactly `option` ("cpu" is not
// found in "cpuacct,cpuset").
bool HasOption(std::string_view options, std::string_view option);

}  // namespace tv
