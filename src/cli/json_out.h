// The --json output of a command: indented, one document on stdout. Text that
// is not UTF-8 (a process name the kernel cut mid-character, an older run's
// file) is written as U+FFFD instead of aborting the command.
#pragma once

#include <iostream>
#include <nlohmann/json.hpp>

namespace tv {

template <typename Json>
void PrintJson(const Json& j) {
  std::cout << j.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
}

}  // namespace tv
