// The text printed when a run ends, rendered from the run's summary
// (store/run_summary.h), so it and summary.json always hold the same numbers.
#pragma once

#include <string>
#include <string_view>

#include "store/run_summary.h"

namespace tv {

// The human summary printed at the end (several lines, ends with a newline),
// each line wrapped at its spaces to `width` columns (WrapSummary); `width` 0
// (the default): whole lines, for a file or a pipe. Said on stderr, `width` is
// TerminalColumns(STDERR_FILENO) (views/terminal_row.h). `title` names a run
// without a command (a job `serve` kept) on the first line.
std::string FormatSummary(const RunSummary& summary, int width = 0, std::string_view title = {});

// `text` (lines ending in '\n') with each line wider than `width` columns
// broken at its spaces (WrapColumns), continuing under the line's label column:
// column 11 for "  Label    ..." lines, under the text after "trainvitals: "
// for the first line, two columns in for the deeper items (a finding, its
// advice). `width` <= 0: unchanged. Pure.
std::string WrapSummary(std::string_view text, int width);

// The program a command line runs, short: the executable's base name, and for
// an interpreter (python, sh, ...) its script's base name or `-m module`
// ("/venv/bin/python -u /src/train.py --lr 1e-3" -> "python train.py";
// "python3 -c ..." -> "python3"). Empty for an empty command. Pure.
std::string ShortProgram(std::string_view command);

}  // namespace tv
