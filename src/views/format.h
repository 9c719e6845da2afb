// Human formatting for views. The core keeps SI base units; only views turn
// bytes into GiB and ratios into percent.
#pragma once

#include <string>

namespace tv {

std::string FormatBytes(double bytes);       // "812 MiB", "5.2 GiB"
std::string FormatPercent(double ratio);     // "87%"
std::string FormatDuration(double seconds);  // "1:02:03", "4.2 s"

}  // namespace tv
