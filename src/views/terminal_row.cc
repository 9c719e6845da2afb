#include "views/terminal_row.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace tv {
namespace {

constexpr int kMinRows = 2;
constexpr int kMinColumns = 10;

bool TerminalSize(int fd, int* rows, int* cols) {
  winsize ws{};
  if (::ioctl(fd, TIOCGWINSZ, &ws) != 0 || ws.ws_row < kMinRows || ws.ws_col < kMinColumns) {
    return false;
  }
  *rows = ws.ws_row;
  *cols = ws.ws_col;
  return true;
}

// The scroll region over rows 1..rows-1, with the cursor kept on its line and
// column: IND first, so a cursor on the bottom row scrolls the screen up one
// line instead of being left under the status row.
std::string SetRegion(int rows) {
  return fmt::format("\033D\0337\033[1;{}r\0338\033[1A", rows - 1);
}

// Whole-screen scrolling again, cursor kept.
constexpr std::string_view kResetRegion = "\0337\033[r\0338";

// Erases every line below the cursor's (where a stale status row may sit after
// a resize; below the program's cursor the scrolling area is blank), cursor kept.
constexpr std::string_view kEraseBelow = "\033D\033[2K\033[J\033[1A";

bool IsContinuation(unsigned char c) { return (c & 0xC0) == 0x80; }

}  // namespace

int DisplayColumns(std::string_view text) {
  int n = 0;
  for (char c : text) n += IsContinuation(static_cast<unsigned char>(c)) ? 0 : 1;
  return n;
}

std::string FitColumns(std::string_view text, int columns) {
  if (DisplayColumns(text) <= columns) return std::string(text);
  if (columns <= 0) return {};
  // Keep columns-1 code points and add the ellipsis.
  int kept = 0;
  size_t end = 0;
  while (end < text.size()) {
    size_t next = end + 1;
    while (next < text.size() && IsContinuation(static_cast<unsigned char>(text[next]))) ++next;
    if (kept + 1 > columns - 1) break;
    ++kept;
    end = next;
  }
  std::string out(text.substr(0, end));
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out + "…";
}

std::string WrapColumns(std::string_view line, int width, int indent) {
  if (width <= 0 || DisplayColumns(line) <= width) return std::string(line);
  indent = std::clamp(indent, 0, width / 2);
  std::string out;
  out.reserve(line.size() + 16);
  int col = 0;            // columns on the current output line
  bool has_word = false;  // the current output line holds a word
  size_t i = 0;
  while (i < line.size()) {
    size_t gap_end = line.find_first_not_of(' ', i);
    if (gap_end == std::string_view::npos) break;  // trailing spaces
    size_t word_end = line.find(' ', gap_end);
    if (word_end == std::string_view::npos) word_end = line.size();
    std::string_view gap = line.substr(i, gap_end - i);
    std::string_view word = line.substr(gap_end, word_end - gap_end);
    int gap_cols = static_cast<int>(gap.size());
    int word_cols = DisplayColumns(word);
    if (has_word && col + gap_cols + word_cols > width) {
      out += '\n';
      out.append(static_cast<size_t>(indent), ' ');
      col = indent;
    } else {
      out.append(gap);
      col += gap_cols;
    }
    out.append(word);
    col += word_cols;
    has_word = true;
    i = word_end;
  }
  return out;
}

int TerminalColumns(int fd) {
  if (::isatty(fd) == 0) return 0;
  winsize ws{};
  if (::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  if (const char* env = std::getenv("COLUMNS"); env != nullptr) {
    char* end = nullptr;
    long n = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && n > 0 && n < 100000) return static_cast<int>(n);
  }
  return 0;
}

std::unique_ptr<TerminalRow> TerminalRow::Open(int fd) {
  if (::isatty(fd) == 0) return nullptr;
  const char* term = std::getenv("TERM");
  if (term == nullptr || *term == '\0' || std::string_view(term) == "dumb") return nullptr;
  int rows = 0, cols = 0;
  if (!TerminalSize(fd, &rows, &cols)) return nullptr;
  return std::unique_ptr<TerminalRow>(new TerminalRow(fd, rows, cols));
}

TerminalRow::~TerminalRow() { Release(); }

void TerminalRow::WriteAll(std::string_view s) const {
  // One write(2) for the whole sequence: the tty does not interleave another
  // process's write inside it. Retried only when interrupted or cut short.
  while (!s.empty()) {
    ssize_t n = ::write(fd_, s.data(), s.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    s.remove_prefix(static_cast<size_t>(n));
  }
}

std::string TerminalRow::DrawSequence() const {
  return fmt::format("\0337\033[{};1H\033[0m{}\033[K\0338", rows_, FitColumns(text_, cols_ - 1));
}

void TerminalRow::Reserve() {
  std::lock_guard lock(mu_);
  if (reserved_) return;
  int rows = rows_, cols = cols_;
  if (TerminalSize(fd_, &rows, &cols)) {
    rows_ = rows;
    cols_ = cols;
  }
  reserved_ = true;
  WriteAll(SetRegion(rows_) + DrawSequence());
}

void TerminalRow::Release() {
  std::lock_guard lock(mu_);
  if (!reserved_) return;
  reserved_ = false;
  WriteAll(fmt::format("\0337\033[{};1H\033[0m\033[2K\033[r\0338", rows_));
}

std::string TerminalRow::ResizeLocked() {
  int rows = rows_, cols = cols_;
  if (!reserved_ || !TerminalSize(fd_, &rows, &cols) || (rows == rows_ && cols == cols_)) return {};
  rows_ = rows;
  cols_ = cols;
  return std::string(kResetRegion) + std::string(kEraseBelow) + SetRegion(rows_);
}

void TerminalRow::Draw(std::string_view text) {
  std::lock_guard lock(mu_);
  text_ = text;
  if (!reserved_) return;
  WriteAll(ResizeLocked() + DrawSequence());
}

void TerminalRow::Follow() {
  std::lock_guard lock(mu_);
  std::string resize = ResizeLocked();
  if (!resize.empty()) WriteAll(resize + DrawSequence());
}

void TerminalRow::WriteLine(std::string_view line) {
  std::lock_guard lock(mu_);
  std::string out = reserved_ ? "\r\033[K" : "";
  out.append(line);
  out += '\n';
  WriteAll(out);
}

int TerminalRow::width() const {
  std::lock_guard lock(mu_);
  return cols_ - 1;
}

}  // namespace tv
