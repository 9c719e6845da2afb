// Mistakes on the command line, in trainvitals' own words. Every error of the
// command-line parser (CLI11) is turned here, by its type and the command it
// came from, into one line that starts with "trainvitals: ", names the command,
// says what was wrong and, for a mistyped option, command or value, suggests
// the near one (core/near.h). The candidates are read from the parser's own
// tables of options and commands, so they are never out of date.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace tv {

// The message for `error`, thrown while `app` (the top-level command) parsed
// the command line: "trainvitals: run: unknown option --intervl (did you mean
// --interval?)". No newline at the end.
std::string UsageErrorMessage(const CLI::App& app, const CLI::ParseError& error);

// After a parse that succeeded: the message when a command that takes the
// rest of the line as words of its own (run's COMMAND) starts with an option
// that command does not know (`run --intervl 2 python x.py`); empty when the
// line is fine.
std::string UnknownLeadingOptionMessage(const CLI::App& app);

}  // namespace tv
