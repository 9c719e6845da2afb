// MarkerEndpoint: the sampler's end of the marker protocol (protocol.h). Makes a
// private directory (0700) holding the datagram socket and the steps file, and
// removes both when destroyed. Reading never blocks.
//
// Thread safety: made and destroyed by the controlling thread; Receive and
// slots() from the sampler thread only.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "markers/protocol.h"

namespace tv {

class MarkerEndpoint {
 public:
  // Under $TMPDIR (else /tmp), after removing the stale directories of runs
  // killed there (stale_dirs.h). Returns nullptr with `error` set on failure.
  static std::unique_ptr<MarkerEndpoint> Create(double interval_s, std::string* error);
  ~MarkerEndpoint();
  MarkerEndpoint(const MarkerEndpoint&) = delete;
  MarkerEndpoint& operator=(const MarkerEndpoint&) = delete;

  const std::string& socket_path() const { return socket_path_; }

  // Reads one waiting message into `out`, from any client; false when none is
  // waiting. Accepts new clients and drops those that hung up as it goes.
  bool Receive(std::string* out);
  const StepSlot* slots() const { return SlotsOf(map_); }

 private:
  MarkerEndpoint() = default;
  std::string dir_;
  std::string socket_path_;
  std::string steps_path_;
  std::string owner_path_;  // owner.pid: this process's PID (stale_dirs.h)
  int fd_ = -1;             // listening
  std::vector<int> clients_;
  size_t cursor_ = 0;  // the client Receive reads next
  void* map_ = nullptr;
  std::string buffer_;
};

}  // namespace tv
