// Word wrapping for a terminal's width, and how wide the terminal on a file
// descriptor is (a pseudo-terminal of a set size; a pipe has no width).
#include "views/terminal_row.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <vector>

namespace tv::terminal_row_test {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(WrapColumns, BreaksAtSpacesNeverInsideAWord) {
  std::string line = "  GPU0     util mean 92%, max 100%; memory peak 27.9 GiB; energy 300 J";
  EXPECT_EQ(WrapColumns(line, 60, 11),
            "  GPU0     util mean 92%, max 100%; memory peak 27.9 GiB;\n"
            "           energy 300 J");
  EXPECT_EQ(WrapColumns(line, 72, 11), line);  // it fits: unchanged
  EXPECT_EQ(WrapColumns(line, 0, 11), line);   // no width: whole
}

TEST(WrapColumns, EveryLineFitsAndTheWordsStayInOrder) {
  std::string line =
      "  Findings input-bound [warning] at 12.5 s: the GPUs waited for data 41% "
      "of the time over 60 s while the loader's workers were all busy";
  for (int width : {20, 33, 47, 80}) {
    std::string wrapped = WrapColumns(line, width, 11);
    std::string joined;
    for (const std::string& l : Lines(wrapped)) {
      // Wider only when it is one word after the indent.
      bool one_word = l.find(' ', l.find_first_not_of(' ')) == std::string::npos;
      EXPECT_TRUE(DisplayColumns(l) <= width || one_word) << l;
      joined += l.substr(l.find_first_not_of(' ')) + " ";
    }
    EXPECT_EQ(joined, line.substr(2) + " ") << wrapped;
  }
}

TEST(WrapColumns, CountsCodePointsNotBytes) {
  // 20 code points, 24 bytes: fits in 20 columns.
  EXPECT_EQ(WrapColumns("max 81°C — ok ␛[2J x", 20, 2), "max 81°C — ok ␛[2J x");
  EXPECT_EQ(WrapColumns("max 81°C — ok ␛[2J xy", 20, 2), "max 81°C — ok ␛[2J\n  xy");
}

TEST(WrapColumns, AWordLongerThanALineStandsWholeOnItsOwn) {
  EXPECT_EQ(WrapColumns("  Run      runs/20240101-120000-very-long-name done", 20, 11),
            "  Run\n"
            "          runs/20240101-120000-very-long-name\n"
            "          done");
}

TEST(TerminalColumns, IsTheTerminalsWidthAndZeroForAPipe) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  EXPECT_EQ(TerminalColumns(pipe_fds[1]), 0);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);

  int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) {
    GTEST_SKIP() << "no pseudo-terminals here";
  }
  int pty = ::open(::ptsname(master), O_RDWR | O_NOCTTY);
  ASSERT_GE(pty, 0);
  winsize ws{};
  ws.ws_row = 40;
  ws.ws_col = 100;
  ASSERT_EQ(::ioctl(pty, TIOCSWINSZ, &ws), 0);
  EXPECT_EQ(TerminalColumns(pty), 100);
  ::close(pty);
  ::close(master);
}

}  // namespace
}  // namespace tv::terminal_row_test
