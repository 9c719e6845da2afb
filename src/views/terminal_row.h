// TerminalRow: the bottom row of a terminal, kept for trainvitals' live status
// while the monitored program writes to the same terminal. Like apt's progress
// line, it sets a scroll region (DECSTBM) over every row but the last, so the
// program's lines and `\r` progress bars scroll above the status row and are
// never written over; the status row is drawn with the cursor saved and
// restored (DECSC/DECRC) in one write(2), which the terminal driver does not
// interleave with the program's own writes.
//
// Owned by the command (run, attach), which must Release() it on every way out:
// before the summary, before stopping for Ctrl-Z (Suspend), and in the
// destructor. Reserve() again after `fg` (Resume) and after a resize (Follow).
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace tv {

class TerminalRow {
 public:
  // A row on `fd` when it is a terminal of at least 2 rows and 10 columns and
  // TERM is set and not "dumb"; else nullptr (no live status).
  static std::unique_ptr<TerminalRow> Open(int fd);
  ~TerminalRow();

  // Sets the scroll region and draws the last text. Keeps the program's cursor
  // where it was (the screen scrolls one line when the cursor was on the bottom
  // row).
  void Reserve();
  // Clears the status row and resets the scroll region to the whole screen.
  // Idempotent.
  void Release();
  // Draws `text` (no control characters) in the status row, cut to the width.
  void Draw(std::string_view text);
  // Writes `line` (without its newline) into the scrolling area at the cursor,
  // over the program's unfinished `\r` bar if any (the bar's next redraw comes
  // on the following line).
  void WriteLine(std::string_view line);
  // Reads the terminal's size; when it changed since the region was set, clears
  // the old status row and reserves the new bottom row. Call on SIGWINCH and
  // now and then (the terminal sends SIGWINCH only to its foreground group).
  void Follow();
  // Columns available to Draw's text (the last column stays empty so that the
  // terminal never wraps).
  int width() const;

 private:
  TerminalRow(int fd, int rows, int cols) : fd_(fd), rows_(rows), cols_(cols) {}
  void WriteAll(std::string_view s) const;
  std::string DrawSequence() const;
  // When the terminal's size changed while reserved: the sequence that clears
  // the old status row and reserves the new bottom row; else empty.
  std::string ResizeLocked();

  const int fd_;
  mutable std::mutex mu_;
  int rows_;
  int cols_;
  bool reserved_ = false;
  std::string text_;
};

// `text` cut to at most `columns` display columns (UTF-8, every code point one
// column), ending in "…" when cut.
std::string FitColumns(std::string_view text, int columns);
// Display columns of UTF-8 `text` (every code point one column).
int DisplayColumns(std::string_view text);
// One line of text (no newline) broken at its spaces into lines of at most
// `width` display columns, joined by '\n' (none at the end); each continuation
// starts with `indent` spaces (at most width / 2) in place of the space it broke
// at. Words are never cut: one longer than a line stands whole on its own.
// Spaces inside a line are kept; those at a break are dropped. `width` <= 0:
// the line unchanged. Pure.
std::string WrapColumns(std::string_view line, int width, int indent);
// The width of the terminal `fd` is (TIOCGWINSZ, else $COLUMNS); 0 when `fd`
// is not a terminal (a file, a pipe: lines go whole) or its width is unknown.
int TerminalColumns(int fd);

}  // namespace tv
