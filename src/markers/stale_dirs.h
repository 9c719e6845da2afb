// Marker directories (trainvitals-XXXXXX where markers/endpoint.h puts them)
// that a run killed with SIGKILL could not remove. Each directory names its owner in `owner.pid`;
// at start a new endpoint removes the directories of this user whose owner is gone. A directory
// another running trainvitals owns is never touched.
//
// Thread safety: functions only; call from the controlling thread.
#pragma once

#include <string>

namespace tv {

inline constexpr char kOwnerFileName[] = "owner.pid";

// Removes, in `tmp_dir`, every trainvitals-XXXXXX directory of the calling
// user that is stale: nothing listens on its socket, and its `owner.pid`
// names a process that does not exist here (a process of another PID
// namespace sharing this directory would seem gone, hence the socket), or (made
// before owner files, or killed before writing one) it has none and is over a
// minute old. Only the files a marker
// directory holds are removed; a directory holding anything else stays.
// Returns how many were removed.
int RemoveStaleMarkerDirs(const std::string& tmp_dir);

}  // namespace tv
