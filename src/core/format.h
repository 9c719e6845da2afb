// Human formatting of numbers (bytes as GiB, ratios as percent, durations): a
// leaf every layer may use for its messages. Data keeps SI base units; only
// text for people goes through here.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tv {

std::string FormatBytes(double bytes);       // "812 MiB", "5.2 GiB"
std::string FormatPercent(double ratio);     // "87%"
std::string FormatDuration(double seconds);  // "1:02:03", "4.2 s"

// `arg` as a POSIX shell reads it back as one word: bare when it is plain,
// else in double quotes when it holds a single quote (and nothing a shell
// expands in double quotes), else in single quotes.
std::string ShellQuote(std::string_view arg);
// The command as one line a person can paste into a shell:
// python3 -c "print('hi')".
std::string ShellCommand(const std::vector<std::string>& argv);

}  // namespace tv
