// trainvitals: the command-line front door. Parses the command, runs it, and
// turns setup mistakes into one clear message and exit code 2: the parser's
// errors worded by cli/usage_error.h, the others (ConfigError) as thrown.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "cli/child.h"
#include "cli/commands.h"
#include "cli/usage_error.h"
#include "core/config.h"
#include "sources/gpu_opening.h"

int main(int argc, char** argv) {
  CLI::App app{"trainvitals: see what a training run costs and what holds it back.", "trainvitals"};
  app.set_version_flag("--version", TRAINVITALS_VERSION);
  app.require_subcommand(1);
  // Words after the first "--" are the command to run, given to `run` verbatim.
  std::vector<std::string> after_dashes;
  int parsed_argc = argc;
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--") {
      after_dashes.assign(argv + i + 1, argv + argc);
      parsed_argc = i;
      break;
    }
  }
  // Each command's options cost the start to build (CLI11): a command named
  // first is built alone; anything else (help, a mistake, `docs`, which
  // documents them all) builds every command. `run` also takes the words
  // after "--".
  tv::Action action;
  using Add = void (*)(CLI::App&, tv::Action*);
  const std::pair<std::string_view, Add> others[] = {
      {"attach", tv::AddAttachCommand},   {"check", tv::AddCheckCommand},
      {"export", tv::AddExportCommand},   {"analyze", tv::AddAnalyzeCommand},
      {"report", tv::AddReportCommand},   {"runs", tv::AddRunsCommand},
      {"compare", tv::AddCompareCommand}, {"pick", tv::AddPickCommand},
      {"top", tv::AddTopCommand},         {"serve", tv::AddServeCommand},
      {"stacks", tv::AddStacksCommand},   {"profile", tv::AddProfileCommand},
      {"docs", tv::AddDocsCommand},
  };
  std::string_view first = parsed_argc > 1 ? argv[1] : "";
  bool known = first == "run" || std::any_of(std::begin(others), std::end(others),
                                             [&](const auto& c) { return c.first == first; });
  bool all = !known || first == "docs";
  if (all || first == "run") tv::AddRunCommand(app, after_dashes, &action);
  for (const auto& [name, add] : others) {
    if (all || name == first) add(app, &action);
  }
  try {
    app.parse(parsed_argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "{}\n", tv::UsageErrorMessage(app, e));
    return 2;
  } catch (const tv::ConfigError& e) {
    fmt::print(stderr, "trainvitals: {}\n", e.what());
    return 2;
  }
  if (std::string why = tv::UnknownLeadingOptionMessage(app); !why.empty()) {
    fmt::print(stderr, "{}\n", why);
    return 2;
  }
  // `run` and `attach` wait for their signals (sigtimedwait, signalfd): they
  // are blocked before any thread exists, so every thread inherits the mask
  // and the signals reach only that wait. Every other command keeps the
  // default actions, so INT, TERM and HUP end it wherever it is.
  for (const CLI::App* chosen : app.get_subcommands()) {
    if (chosen->get_name() == "run" || chosen->get_name() == "attach") tv::BlockSupervisorSignals();
  }
  int code = 2;
  try {
    if (action) code = action();
  } catch (const tv::ConfigError& e) {
    fmt::print(stderr, "trainvitals: {}\n", e.what());
    code = 2;
  }
  if (tv::GpuOpening::InFlight() > 0) {
    // The GPU driver is still opening (`run` of a command shorter than that):
    // everything is written; leave without running the driver's static
    // destructors under its thread.
    std::fflush(nullptr);
    ::_exit(code);
  }
  return code;
}
