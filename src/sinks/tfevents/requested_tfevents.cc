#include "sinks/tfevents/requested_tfevents.h"

#include <fmt/format.h>

#include <filesystem>

#include "store/marker_event_record.h"

namespace tv {
namespace {

bool SameDirectory(const std::string& a, const std::string& b) {
  std::error_code ec;
  namespace fs = std::filesystem;
  return fs::weakly_canonical(fs::absolute(a, ec), ec) ==
         fs::weakly_canonical(fs::absolute(b, ec), ec);
}

}  // namespace

void RequestedTfevents::Say(const std::string& line) const {
  if (say_) say_(line);
}

void RequestedTfevents::OnEvent(const Event& event) {
  TrainingEvent marker;
  if (event.type != EventType::kTensorboardLogDir || !MarkerEventFromEvent(event, &marker)) return;
  const std::string& dir = marker.log_dir;
  if (dir.empty()) return;
  if (!given_logdir_.empty()) {
    if (!SameDirectory(dir, given_logdir_)) {
      Say(
          fmt::format("trainvitals: TensorBoard system scalars go to {} (--tensorboard), not also "
                      "to the training's log_dir {}",
                      given_logdir_, dir));
    }
    return;
  }
  if (!logdir_.empty()) {
    if (!SameDirectory(dir, logdir_)) {
      Say(fmt::format("trainvitals: TensorBoard system scalars already go to {}, not also to {}",
                      logdir_, dir));
    }
    return;
  }
  std::string error;
  sink_ = TfeventsSink::Open(dir, start_wall_, interval_s_, &error);
  if (!sink_) {
    Say(fmt::format("trainvitals: no TensorBoard system scalars for the training's log_dir: {}",
                    error));
    logdir_ = dir;  // said once; later requests are not retried
    return;
  }
  logdir_ = dir;
  Say(fmt::format("trainvitals: TensorBoard system scalars go to {}/system too", dir));
}

void RequestedTfevents::OnRow(const Row& row) {
  if (sink_) sink_->OnRow(row);
}

void RequestedTfevents::OnClose() {
  if (sink_) sink_->OnClose();
}

}  // namespace tv
