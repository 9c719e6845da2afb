// StatusLine: what a run says on stderr while it goes. With a TerminalRow
// (stderr is a terminal), a one-line status (elapsed, job CPU and memory, host
// memory, per GPU load, memory and temperature, or a range over many GPUs) in
// the terminal's reserved bottom row, fitted to its width, released before the
// summary. Always (unless --quiet, when it is not made at all), the epoch lines
// and a line for what cannot be measured: the notices of the run's first
// interval (no NVIDIA driver, no RAPL, ...) as one line, later ones each on its
// own; a notice already said in this process is not said again (a Python
// process that fits several times says it at the first fit); a line when a
// finding opens, at most one per finding id in `finding_repeat_s`; the epoch
// lines end with the run's health score so far.
//
// Thread safety: a Sink, used on the sink thread only.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/sink.h"
#include "views/terminal_row.h"

namespace tv {

class StatusLine final : public Sink {
 public:
  // `row`: where the live status goes; nullptr for none. Not owned; outlives
  // this sink's OnClose.
  StatusLine(int fd, TerminalRow* row) : fd_(fd), row_(row) {}
  void OnRow(const Row& row) override;
  void OnEvent(const Event& event) override;
  void OnClose() override;
  // Says `line` (no newline) on stderr as the epoch lines are said.
  void Say(const std::string& line) { WriteLine(line); }
  void set_finding_repeat_s(double s) { finding_repeat_s_ = s; }

 private:
  void WriteLine(const std::string& line);
  void SayNotices();
  int fd_;
  TerminalRow* row_;
  bool first_row_seen_ = false;
  // (source, message) of the notices before the first row.
  std::vector<std::pair<std::string, std::string>> start_notices_;
  double finding_repeat_s_ = 300;
  std::optional<double> health_score_;            // the latest row's
  std::optional<double> goodput_ratio_;           // the latest row's
  std::vector<std::string_view> not_judged_;      // the latest row's (static names)
  std::map<std::string, double> finding_said_t_;  // finding id -> when its line was said
  bool forecast_said_ = false;
};

// The status line for `row` in at most `columns` columns (no control
// characters): every GPU on its own when that fits, else one range over all
// of them ("8 GPUs: busy 88–93%, mem 61–65 GiB"), then without host memory,
// then with fewer words, then cut with "…".
std::string StatusText(const Row& row, int columns);

}  // namespace tv
