// NodeSessionsSource: `serve` joins the training sessions on the node (`run`,
// `attach`, a callback or monitor(): each announces itself for `trainvitals
// top` in its user's sessions directory, run/live_dir.h) to the jobs they are
// in, so that a job's steps, epoch, data-wait share, findings and health are
// served under it without a second sampler (NodeJob::sessions).
//
// Where it looks, under `root` (the host's "/"): every user's
// run/user/UID/trainvitals/sessions, dev/shm/trainvitals-UID/sessions and
// tmp/trainvitals-UID/sessions; and the same places inside each container
// job's own file system (/proc/PID/root), whose sessions are that job's. The
// places are looked for every kDiscover_s (listing /tmp and each container's
// is the costly part); the sessions in the places found are read each tick.
//
// A user's files are read as a careful root reads them: each directory is
// opened without following a link and must belong to the user (the sessions
// directory private to them); each file must be a regular file of theirs, at
// most kMaxFileBytes. A session on the host joins the job holding its job's
// root process, and only when that process is the user's own (root's sessions
// join any): nobody can speak for another user's job. An announcement older
// than kStale_s is a session that died without removing it.
//
// Thread safety: a Source, on the sampler thread; placed after
// NodeJobsSource, whose jobs it joins.
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "core/source.h"

namespace tv {

class NodeSessionsSource final : public Source {
 public:
  static constexpr size_t kMaxFileBytes = 1 << 20;
  static constexpr double kStale_s = 30;
  static constexpr double kDiscover_s = 10;

  // `root`: the tree standing for "/", `proc` for "/proc" (tests give others).
  explicit NodeSessionsSource(std::string root = "/", std::string proc = "/proc")
      : root_(std::move(root)), proc_(std::move(proc)) {}
  std::string_view name() const override { return "sessions"; }
  void Read(const Tick& tick, Sample* out, std::vector<Notice>* notices) override;

 private:
  // A user's sessions directory: base/shared[/runtime]/own/sessions, where
  // `runtime` (run/user's UID directory), `own` and `sessions` are the user's.
  struct Place {
    std::string base;     // "/", or a container's root
    std::string shared;   // "run/user", "dev/shm", "tmp"
    std::string runtime;  // "UID" under run/user, else empty
    std::string own;      // "trainvitals", "trainvitals-UID"
    uid_t uid = 0;
    std::string job;  // a container's places: its job's kind and id; empty on the host
  };
  struct Found {
    uid_t uid = 0;
    JobSession session;
    int job_pid = 0;
  };
  // The places under the tree `base`, for the job `job` (empty: the host).
  static void Discover(const std::string& base, const std::string& job, std::vector<Place>* out);
  // The sessions announced in `place`, appended to `out`.
  static void ReadPlace(const Place& place, double now_t, std::vector<Found>* out);

  std::string root_;
  std::string proc_;
  std::vector<Place> places_;
  double discovered_mono_s_ = -1;
};

}  // namespace tv
