// RequestedTfevents: TensorBoard scalars into the log directory a training
// process names while it runs (marker "tensorboard_log_dir", sent by a Keras
// callback's `log_dir=` or any Monitor given `tensorboard=` under
// `trainvitals run`; docs/markers.md): from the next row on, exactly as
// --tensorboard writes them, in <log_dir>/system. One directory per run: when
// --tensorboard already writes, or another directory was named first, a
// request is not followed; every outcome is told through `say` in one line.
//
// Thread safety: a Sink, used on the sink thread only.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "core/sink.h"
#include "sinks/tfevents/tfevents_sink.h"

namespace tv {

class RequestedTfevents final : public Sink {
 public:
  // `given_logdir`: --tensorboard's directory, empty when none. `say`: where
  // the one line about each request goes (may be empty: quiet).
  RequestedTfevents(std::string given_logdir, double start_wall, double interval_s,
                    std::function<void(const std::string&)> say)
      : given_logdir_(std::move(given_logdir)),
        start_wall_(start_wall),
        interval_s_(interval_s),
        say_(std::move(say)) {}
  void OnRow(const Row& row) override;
  void OnEvent(const Event& event) override;
  void OnClose() override;
  // The directory followed, empty when none.
  const std::string& logdir() const { return logdir_; }

 private:
  void Say(const std::string& line) const;
  std::string given_logdir_;
  double start_wall_;
  double interval_s_;
  std::function<void(const std::string&)> say_;
  std::string logdir_;
  std::unique_ptr<TfeventsSink> sink_;
};

}  // namespace tv
