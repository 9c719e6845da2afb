#include "core/format.h"

#include <gtest/gtest.h>

namespace tv::format_test {
namespace {

TEST(ShellCommand, KeepsTheQuotingAShellNeeds) {
  EXPECT_EQ(ShellCommand({"python3", "-c", "print('hi')"}), "python3 -c \"print('hi')\"");
  EXPECT_EQ(ShellCommand({"python", "train.py", "--lr=0.1", "a/b.txt"}),
            "python train.py --lr=0.1 a/b.txt");
  EXPECT_EQ(ShellCommand({"echo", "two words", ""}), "echo 'two words' ''");
  EXPECT_EQ(ShellCommand({"sh", "-c", "echo \"$HOME\" 'x'"}), "sh -c 'echo \"$HOME\" '\\''x'\\'''");
}

}  // namespace
}  // namespace tv::format_test
