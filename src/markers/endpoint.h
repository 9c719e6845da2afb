// MarkerEndpoint: the sampler's end of the marker protocol (protocol.h). Makes a
// private directory (0700) holding the datagram socket and the steps file, and
// removes both when destroyed. Reading never blocks.
//
// Thread safety: made and destroyed by the controlling thread; Receive,
// slots() and the back-channel from the sampler thread only.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "markers/protocol.h"

namespace tv {

class MarkerEndpoint {
 public:
  // Connections held at once; more are accepted and closed at once (counted).
  static constexpr size_t kMaxClients = 1024;

  // In this user's directory in memory (core/private_path.h
  // MemoryRuntimeDir), or where $TMPDIR is given (else where there is no such
  // directory), in $TMPDIR's (else /tmp's) trainvitals-<uid>, private to the
  // user; after removing the stale directories of runs killed there
  // (stale_dirs.h). Returns nullptr with `error` set on failure.
  static std::unique_ptr<MarkerEndpoint> Create(double interval_s, std::string* error);
  ~MarkerEndpoint();
  MarkerEndpoint(const MarkerEndpoint&) = delete;
  MarkerEndpoint& operator=(const MarkerEndpoint&) = delete;

  const std::string& socket_path() const { return socket_path_; }
  // The PID of the process at the other end of connection `client` when it
  // connected (SO_PEERCRED); 0 when the connection is gone.
  int PeerPid(uint64_t client) const;

  // Reads one waiting message into `out`, from any client; false when none is
  // waiting. Accepts new clients and drops those that hung up as it goes.
  // `*client` (when given) names the connection it came on, unique for the
  // endpoint's life.
  bool Receive(std::string* out, uint64_t* client = nullptr);
  // Appends the connections that hung up since the last call: every process
  // holding one closed it or exited (with or without saying bye).
  void TakeHangUps(std::vector<uint64_t>* out);
  const StepSlot* slots() const { return SlotsOf(map_); }
  // Frees slot `index` for the next client to claim, if `pid` still holds it.
  void FreeSlot(int index, uint32_t pid);
  // The back-channel (markers/risk.h): the header's risk record, and the
  // risk number written into slot `index` (release).
  RiskRecord* risk_record() { return &static_cast<StepsHeader*>(map_)->risk; }
  void SignalRisk(int index, uint32_t seq);
  // Request number `seq` (its file written) into slot `index` (release).
  void SignalRequest(int index, uint32_t seq);
  uint64_t refused_connections() const { return refused_; }

 private:
  MarkerEndpoint() = default;
  std::string dir_;
  std::string socket_path_;
  std::string steps_path_;
  std::string owner_path_;  // owner.pid: this process's PID (stale_dirs.h)
  int fd_ = -1;             // listening
  struct Client {
    int fd = -1;
    uint64_t id = 0;
  };
  std::vector<Client> clients_;
  uint64_t next_id_ = 1;
  std::vector<uint64_t> hung_up_;
  size_t cursor_ = 0;  // the client Receive reads next
  uint64_t refused_ = 0;
  void* map_ = nullptr;
  std::string buffer_;
};

}  // namespace tv
