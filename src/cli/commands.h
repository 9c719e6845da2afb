// One function per command; each adds its subcommand to `app` and sets
// `*action` to what runs when that subcommand was chosen. An action returns the
// process exit code.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace tv {

using Action = std::function<int()>;

// `after_dashes`: the words after the first "--" of the command line, which
// main() keeps away from the parser: they are the command to run, verbatim.
void AddRunCommand(CLI::App& app, const std::vector<std::string>& after_dashes, Action* action);
void AddAttachCommand(CLI::App& app, Action* action);
void AddCheckCommand(CLI::App& app, Action* action);
void AddDocsCommand(CLI::App& app, Action* action);
void AddExportCommand(CLI::App& app, Action* action);
void AddAnalyzeCommand(CLI::App& app, Action* action);
void AddReportCommand(CLI::App& app, Action* action);
void AddRunsCommand(CLI::App& app, Action* action);
void AddCompareCommand(CLI::App& app, Action* action);
void AddPickCommand(CLI::App& app, Action* action);
void AddTopCommand(CLI::App& app, Action* action);
void AddServeCommand(CLI::App& app, Action* action);
void AddStacksCommand(CLI::App& app, Action* action);
void AddProfileCommand(CLI::App& app, Action* action);

// A check for an option that takes a size of memory ("40GiB", "8GB", bytes;
// core/size.h): turns the value into bytes, or fails saying what is wrong and
// which unit was meant. Use: `->transform(SizeValue())`.
CLI::Validator SizeValue();

}  // namespace tv
