#include "cli/top_screen.h"

#include <langinfo.h>
#include <ncurses.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <clocale>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace tv {
namespace {

enum Pair : short {
  kPairHeader = 1,
  kPairGood,
  kPairWarn,
  kPairBad,
  kPairJob,
  kPairOther,
  kPairTitle
};

attr_t Attribute(TopStyle style, bool color) {
  auto pair = [&](short p) { return color ? COLOR_PAIR(p) : A_NORMAL; };
  switch (style) {
    case TopStyle::kNormal:
      return A_NORMAL;
    case TopStyle::kTitle:
      return A_BOLD | (color ? pair(kPairTitle) : A_REVERSE);
    case TopStyle::kHeader:
      return A_BOLD | pair(kPairHeader);
    case TopStyle::kDim:
      return A_DIM;
    case TopStyle::kGood:
      return pair(kPairGood);
    case TopStyle::kWarn:
      return A_BOLD | pair(kPairWarn);
    case TopStyle::kBad:
      return A_BOLD | pair(kPairBad);
    case TopStyle::kBarJob:
      return pair(kPairJob);
    case TopStyle::kBarOther:
      return pair(kPairOther);
    case TopStyle::kSelected:
      return A_REVERSE;
  }
  return A_NORMAL;
}

}  // namespace

std::unique_ptr<TopScreen> TopScreen::Open(std::string* error) {
  std::setlocale(LC_ALL, "");
  std::unique_ptr<TopScreen> screen(new TopScreen());
  screen->unicode_ = std::strcmp(::nl_langinfo(CODESET), "UTF-8") == 0;
  screen->screen_ = ::newterm(nullptr, stdout, stdin);
  if (screen->screen_ == nullptr) {
    const char* term = std::getenv("TERM");
    *error = std::string("cannot use the terminal (TERM=") + (term ? term : "unset") + ")";
    return nullptr;
  }
  ::cbreak();
  ::noecho();
  ::nonl();
  ::keypad(stdscr, TRUE);
  ::curs_set(0);
  ::set_escdelay(25);
  const char* no_color = std::getenv("NO_COLOR");
  if ((no_color == nullptr || *no_color == 0) && ::has_colors()) {
    ::start_color();
    ::use_default_colors();
    ::init_pair(kPairHeader, COLOR_CYAN, -1);
    ::init_pair(kPairGood, COLOR_GREEN, -1);
    ::init_pair(kPairWarn, COLOR_YELLOW, -1);
    ::init_pair(kPairBad, COLOR_RED, -1);
    ::init_pair(kPairJob, COLOR_GREEN, -1);
    ::init_pair(kPairOther, COLOR_BLUE, -1);
    ::init_pair(kPairTitle, COLOR_BLACK, COLOR_CYAN);
    screen->color_ = true;
  }
  return screen;
}

TopScreen::~TopScreen() {
  ::endwin();
  ::delscreen(screen_);
}

int TopScreen::columns() const { return COLS; }
int TopScreen::rows() const { return LINES; }

bool TopScreen::FollowSize() {
  // Asked of the terminal at every frame: ncurses notices a SIGWINCH only in
  // some of its waits, and a frame drawn for the old size wraps into garbage.
  winsize ws{};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0 || ws.ws_row == 0 || ws.ws_col == 0)
    return false;
  if (ws.ws_row != LINES || ws.ws_col != COLS) {
    ::resizeterm(ws.ws_row, ws.ws_col);
    ::clearok(stdscr, TRUE);
    return true;
  }
  return false;
}

void TopScreen::Draw(const std::vector<TopLine>& lines) {
  ::erase();
  for (size_t y = 0; y < lines.size() && static_cast<int>(y) < LINES; ++y) {
    ::move(static_cast<int>(y), 0);
    for (const TopSpan& span : lines[y]) {
      ::attrset(Attribute(span.style, color_));
      ::addstr(span.text.c_str());
    }
  }
  ::attrset(A_NORMAL);
  ::refresh();
}

int TopScreen::ReadKey(double timeout_s) {
  ::timeout(static_cast<int>(std::lround(timeout_s * 1000)));
  int key = ::getch();
  return key == ERR ? -1 : key;
}

}  // namespace tv
