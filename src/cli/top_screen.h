// The terminal of `trainvitals top`, through ncurses: the alternate screen with
// no echo and a hidden cursor while it is open, given back as it was when
// closed (after `q`, Ctrl-C or SIGTERM alike). Colour unless NO_COLOR is set
// or the terminal has none; attributes (bold, reverse) always.
//
// Thread safety: one thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "views/top/top_frame.h"

struct screen;

namespace tv {

class TopScreen {
 public:
  // nullptr with *error saying why when the terminal cannot be used.
  static std::unique_ptr<TopScreen> Open(std::string* error);
  ~TopScreen();
  // Takes the terminal's size now; true when it changed (a resize). Call
  // before columns().
  bool FollowSize();
  int columns() const;
  int rows() const;
  // Whether the terminal shows the block characters (a UTF-8 locale).
  bool unicode() const { return unicode_; }
  void Draw(const std::vector<TopLine>& lines);
  // The next key, waiting at most `timeout_s`; -1 when none came. A resized
  // terminal is the key KEY_RESIZE.
  int ReadKey(double timeout_s);

 private:
  TopScreen() = default;
  bool unicode_ = false;
  bool color_ = false;
  struct screen* screen_ = nullptr;  // ncurses' SCREEN
};

}  // namespace tv
