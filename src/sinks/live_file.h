// LiveFile: the running session's announcement for `trainvitals top`, the file
// <sessions dir>/<pid>.json (run/live_dir.h). Rewritten whole at every row
// (written beside, then renamed over, so a reader never sees half of it) with
// who the session is and its latest row, health score, open findings and
// firing alerts (store/live_record.h); removed when the run ends. Format:
// docs/cli.md "How sessions are found".
//
// Thread safety: a Sink, used on the sink thread only.
#pragma once

#include <string>
#include <vector>

#include "core/sink.h"
#include "store/live_record.h"

namespace tv {

class LiveFile final : public Sink {
 public:
  // `dir`: the sessions directory, which exists.
  LiveFile(const std::string& dir, const LiveIdentity& identity);
  void OnRow(const Row& row) override;
  void OnClose() override;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string temp_path_;
  std::string head_;   // the identity's JSON members, made once
  bool said_ = false;  // a failed write was said
};

}  // namespace tv
