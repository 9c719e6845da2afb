// The screen of `trainvitals top` as lines of styled text: the host, each GPU,
// the sessions and the processes, fitted to a width and a height. Pure: the
// terminal (cli/top_screen.h) draws it in colour, `--once` prints its text.
// The user's choices (sort, filter, tree, selection) live in TopUi; the last
// minutes of CPU and GPU busy share in TopHistory, for the sparklines.
//
// Thread safety: none needed (values and pure functions).
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "views/top/top_model.h"

namespace tv {

enum class TopStyle : unsigned char {
  kNormal,
  kTitle,   // the first line
  kHeader,  // a section's or a table's heading
  kDim,     // secondary text, unknown values
  kGood,
  kWarn,
  kBad,
  kBarJob,    // a bar's part held by the sessions' jobs
  kBarOther,  // a bar's part held by anything else
  kSelected,  // the selected process's line
};

struct TopSpan {
  std::string text;  // UTF-8, no control characters
  TopStyle style = TopStyle::kNormal;
};
using TopLine = std::vector<TopSpan>;

// The order of the process list; `s` goes to the next.
enum class TopSort { kGpuMemory, kCpu, kMemory, kPid };
inline constexpr int kTopSorts = 4;
const char* TopSortName(TopSort sort);

struct TopUi {
  TopSort sort = TopSort::kGpuMemory;
  bool tree = true;  // children under their parents
  std::string filter;
  bool editing_filter = false;  // `/` typed: keys go to the filter until Enter or Esc
  int selected_pid = 0;         // 0: the first line
  int scroll = 0;               // the first process line shown
};

// Moves the selection `by` lines (negative: up) in the process list that
// `model` shows with `ui`'s sort and filter.
void MoveSelection(const TopModel& model, int by, TopUi* ui);

// The last minutes of busy shares, one value per refresh.
class TopHistory {
 public:
  static constexpr size_t kLength = 180;
  void Add(const TopModel& model);
  const std::deque<double>& cpu() const { return cpu_; }
  // Empty for a GPU not seen.
  const std::deque<double>& gpu(size_t i) const;

 private:
  std::deque<double> cpu_;
  std::vector<std::deque<double>> gpus_;
};

// The smallest terminal the full screen fits; a smaller one gets one line
// saying so.
inline constexpr int kTopMinColumns = 60;
inline constexpr int kTopMinRows = 10;

// The frame for a terminal of `columns` x `rows`; `rows` <= 0: as many lines as
// the content needs (--once). `unicode`: block characters for bars and
// sparklines, else ASCII. Adjusts ui->scroll so the selection is in view.
std::vector<TopLine> RenderTop(const TopModel& model, const TopHistory& history, TopUi* ui,
                               int columns, int rows, bool unicode);

// The frame's text, one line per line, trailing blanks cut.
std::string TopText(const std::vector<TopLine>& lines);

// Terminal columns that `text` takes (one per code point).
int TextColumns(std::string_view text);

}  // namespace tv
