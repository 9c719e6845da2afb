#include "cli/usage_error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string_view>
#include <vector>

#include "core/near.h"

namespace tv {
namespace {

// CLI11 says what went wrong in its own sentences; the pieces they hold (an
// option's name, the value given, the bounds) are taken back out here, by the
// fixed wording of CLI11's error classes (CLI/Error.hpp, Validators.hpp).

// The commands the parse went into, the top level first: {trainvitals, runs, stats}.
std::vector<const CLI::App*> ParsedChain(const CLI::App& root) {
  std::vector<const CLI::App*> chain{&root};
  while (chain.size() < 16) {
    std::vector<CLI::App*> subs = chain.back()->get_subcommands();
    if (subs.empty()) break;
    chain.push_back(subs.back());
  }
  return chain;
}

// "runs stats"; empty for the top level.
std::string CommandPath(const CLI::App* app) {
  std::string path;
  for (; app != nullptr && app->get_parent() != nullptr; app = app->get_parent()) {
    path = path.empty() ? app->get_name() : app->get_name() + " " + path;
  }
  return path;
}

const CLI::App* Root(const CLI::App* app) {
  while (app->get_parent() != nullptr) app = app->get_parent();
  return app;
}

// "trainvitals: runs stats: ".
std::string Prefix(const CLI::App* app) {
  std::string path = CommandPath(app);
  return Root(app)->get_name() + ": " + (path.empty() ? "" : path + ": ");
}

// "trainvitals runs stats".
std::string FullName(const CLI::App* app) {
  std::string path = CommandPath(app);
  return Root(app)->get_name() + (path.empty() ? "" : " " + path);
}

// The command's usage line as --help prints it, without "Usage: ".
std::string Usage(const CLI::App* app) {
  auto formatter = std::dynamic_pointer_cast<CLI::Formatter>(app->get_formatter());
  if (formatter == nullptr) return FullName(app) + " --help";
  std::string usage = formatter->make_usage(app, FullName(app));
  if (size_t colon = usage.find(": "); colon != std::string::npos) usage.erase(0, colon + 2);
  while (!usage.empty() && std::isspace(static_cast<unsigned char>(usage.back()))) usage.pop_back();
  return usage;
}

std::string Quoted(std::string_view s) { return fmt::format("\"{}\"", s); }

bool IsNumber(std::string_view s, double* value = nullptr) {
  double v = 0;
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return false;
  if (value != nullptr) *value = v;
  return true;
}

// "--intervl", "-x", "--json=1": a word that is meant as an option ("-1" is a number).
bool LooksLikeOption(std::string_view word) {
  return word.size() > 1 && word.front() == '-' && !IsNumber(word);
}

// Every name an option of `app` answers to: "--interval", "-o", "--out".
std::vector<std::string> OptionNames(const CLI::App* app) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app->get_options()) {
    for (const std::string& l : opt->get_lnames()) names.push_back("--" + l);
    for (const std::string& s : opt->get_snames()) names.push_back("-" + s);
  }
  return names;
}

// The command's own commands (`runs`: stats, import); `visible_only` leaves
// out those hidden from --help.
std::vector<std::string> CommandNames(const CLI::App* app, bool visible_only) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app->get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name().empty() || (visible_only && sub->get_group().empty())) continue;
    names.push_back(sub->get_name());
  }
  return names;
}

// The word of `words` that `typed` is probably a typo of (core/near.h).
std::string Nearest(std::string_view typed, const std::vector<std::string>& words) {
  std::vector<std::string_view> views(words.begin(), words.end());
  return std::string(NearestWord(typed, views));
}

bool HasPositionals(const CLI::App* app) {
  return !app->get_options([](const CLI::Option* o) { return o->get_positional(); }).empty();
}

// The option `name` names, looked for from the deepest command up, with the
// command it belongs to; else no option and the deepest command.
std::pair<const CLI::App*, const CLI::Option*> FindOption(const std::vector<const CLI::App*>& chain,
                                                          const std::string& name) {
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    if (const CLI::Option* opt = (*it)->get_option_no_throw(name)) return {*it, opt};
  }
  return {chain.back(), nullptr};
}

// "a whole number", "a number of seconds": what the option's type asks for.
std::string NumberKind(const CLI::Option* opt) {
  std::string type = opt == nullptr ? "" : opt->get_type_name();
  type = type.substr(0, type.find(':'));
  if (type == "INT" || type == "UINT" || type == "N" || type == "COUNT") return "a whole number";
  if (type == "SECONDS" || type == "S") return "a number of seconds";
  return "a number";
}

// The option's value placeholder as --help shows it ("SECONDS", "FILE").
std::string TypeName(const CLI::Option* opt) {
  std::string type = opt == nullptr ? "" : opt->get_type_name();
  return type.substr(0, type.find(':'));
}

// "NAME: rest" into its two parts; no name when there is no ": ".
std::pair<std::string, std::string> SplitName(std::string_view message) {
  size_t colon = message.find(": ");
  if (colon == std::string_view::npos) return {"", std::string(message)};
  return {std::string(message.substr(0, colon)), std::string(message.substr(colon + 2))};
}

std::string LowerFirst(std::string s) {
  if (!s.empty()) s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}

// A bound of a range check as people write it: "0.1", "3600"; CLI11 prints
// them with six decimals.
std::string Bound(double v) { return fmt::format("{}", v); }

// --- one function per kind of mistake ------------------------------------

std::string UnknownOption(const CLI::App* app, std::string_view word) {
  std::string name(word.substr(0, word.find('=')));
  std::string near = Nearest(name, OptionNames(app));
  if (!near.empty()) return fmt::format("unknown option {} (did you mean {}?)", name, near);
  if (app->get_parent() == nullptr) {
    // An option of a command, given before the command: the one named, else
    // every command that has it.
    std::vector<std::string> owners;
    for (const CLI::App* sub : app->get_subcommands()) {
      if (sub->get_option_no_throw(name) != nullptr) owners.push_back(sub->get_name());
    }
    if (!owners.empty()) {
      return fmt::format("unknown option {} before the command: it goes after it ({} {} {})", name,
                         FullName(app), owners.front(), name);
    }
    for (const CLI::App* sub : app->get_subcommands([](const CLI::App*) { return true; })) {
      if (!sub->get_group().empty() && sub->get_option_no_throw(name) != nullptr) {
        owners.push_back(sub->get_name());
      }
    }
    if (!owners.empty()) {
      return fmt::format(
          "unknown option {} before the command: it is an option of {}, given "
          "after the command ({} {} {})",
          name, fmt::join(owners, ", "), FullName(app), owners.front(), name);
    }
    return fmt::format("unknown option {}; {} --help lists the commands", name, FullName(app));
  }
  if (app->get_prefix_command()) {
    return fmt::format("unknown option {}; the command to run and its own options go after --: {}",
                       name, Usage(app));
  }
  return fmt::format("unknown option {}; {} --help lists the options", name, FullName(app));
}

std::string UnknownCommand(const CLI::App* app, std::string_view word) {
  std::string near = Nearest(word, CommandNames(app, false));
  if (!near.empty()) {
    return fmt::format("unknown command {} (did you mean {}?)", Quoted(word), Quoted(near));
  }
  return fmt::format("unknown command {}; commands: {}", Quoted(word),
                     fmt::join(CommandNames(app, true), ", "));
}

// Words the command had no place for.
std::string Extras(const CLI::App* app, const std::vector<std::string>& words) {
  if (words.empty()) return "unexpected arguments";
  if (LooksLikeOption(words.front())) return UnknownOption(app, words.front());
  if (!CommandNames(app, false).empty() && !HasPositionals(app)) {
    return UnknownCommand(app, words.front());
  }
  std::vector<std::string> quoted;
  for (const std::string& w : words) quoted.push_back(Quoted(w));
  if (app->get_prefix_command()) {
    return fmt::format("{} before --: the whole command goes after --: {}", fmt::join(quoted, " "),
                       Usage(app));
  }
  return fmt::format("too many arguments: {} (usage: {})", fmt::join(quoted, " "), Usage(app));
}

std::string NoCommand(const CLI::App* app) {
  std::vector<std::string> words = app->remaining();
  if (!words.empty()) return Extras(app, words);
  return fmt::format("give a command: {} ({} --help describes them)",
                     fmt::join(CommandNames(app, true), ", "), FullName(app));
}

std::string Required(const std::vector<const CLI::App*>& chain, const std::string& message) {
  constexpr std::string_view kIsRequired = " is required";
  if (message == "A subcommand is required" || message.starts_with("Requires at least ")) {
    // The deepest command that takes commands of its own lacks one.
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      if ((*it)->get_require_subcommand_min() > 0) return Prefix(*it) + NoCommand(*it);
    }
  }
  if (message.ends_with(kIsRequired)) {
    std::string name = message.substr(0, message.size() - kIsRequired.size());
    const CLI::App* app = FindOption(chain, name).first;
    return Prefix(app) + fmt::format("missing {}; usage: {}", name, Usage(app));
  }
  return Prefix(chain.back()) + LowerFirst(message);
}

std::string Mismatch(const std::vector<const CLI::App*>& chain, const std::string& message) {
  auto [name, rest] = SplitName(message);
  auto [app, opt] = FindOption(chain, name);
  std::string prefix = Prefix(app);
  bool positional = opt != nullptr && opt->get_positional() && opt->get_lnames().empty() &&
                    opt->get_snames().empty();
  int n = 0;
  size_t got = 0;
  // TypedAtLeast: "--interval: 1 required SECONDS missing".
  if (rest.ends_with(" missing")) {
    std::string type = TypeName(opt);
    return prefix + fmt::format("{} needs a value{}", name, type.empty() ? "" : " (" + type + ")");
  }
  // AtLeast / AtMost: "RUN: At least 2 required but received 1".
  for (auto [lead, more] : {std::pair{"At least ", true}, std::pair{"At Most ", false}}) {
    if (!rest.starts_with(lead)) continue;
    if (std::sscanf(rest.c_str() + std::string_view(lead).size(), "%d required but received %zu",
                    &n, &got) != 2) {
      break;
    }
    std::string what = positional ? fmt::format("{} argument{}", name, n == 1 ? "" : "s")
                                  : fmt::format("value{} for {}", n == 1 ? "" : "s", name);
    return prefix +
           fmt::format("{} {} {}, got {}", more ? "needs at least" : "takes at most", n, what, got);
  }
  if (rest.ends_with("was given a disallowed flag override") || name.empty()) {
    return prefix + LowerFirst(message);
  }
  return prefix + fmt::format("{}: {}", name, LowerFirst(rest));
}

std::string Conversion(const std::vector<const CLI::App*>& chain, const std::string& message) {
  constexpr std::string_view kCouldNot = "Could not convert: ";
  if (message.starts_with(kCouldNot)) {
    std::string_view body = std::string_view(message).substr(kCouldNot.size());
    size_t eq = body.find(" = ");
    std::string name(body.substr(0, eq));
    std::string value(eq == std::string_view::npos ? "" : body.substr(eq + 3));
    auto [app, opt] = FindOption(chain, name);
    if (opt != nullptr && opt->get_expected_max() == 0) {
      return Prefix(app) + fmt::format("{} takes no value ({} given)", name, Quoted(value));
    }
    return Prefix(app) + fmt::format("{}: {} is not {}", name, Quoted(value), NumberKind(opt));
  }
  auto [name, rest] = SplitName(message);
  auto [app, opt] = FindOption(chain, name);
  if (rest.starts_with("too many inputs for a flag") || rest.starts_with("Should be true/false")) {
    return Prefix(app) + fmt::format("{} takes no value", name);
  }
  return Prefix(app) + LowerFirst(message);
}

std::string Validation(const std::vector<const CLI::App*>& chain, const std::string& message) {
  auto [name, rest] = SplitName(message);
  auto [app, opt] = FindOption(chain, name);
  std::string prefix = Prefix(app);
  // CLI::Range (also PositiveNumber, NonNegativeNumber): "Value X not in range A to B".
  constexpr std::string_view kValue = "Value ", kNotInRange = " not in range ", kTo = " to ";
  if (size_t at = rest.find(kNotInRange); rest.starts_with(kValue) && at != std::string::npos) {
    std::string value = rest.substr(kValue.size(), at - kValue.size());
    std::string bounds = rest.substr(at + kNotInRange.size());
    double v = 0, lo = 0, hi = 0;
    size_t to = bounds.find(kTo);
    if (!IsNumber(value, &v) || !std::isfinite(v)) {
      return prefix + fmt::format("{}: {} is not {}", name, Quoted(value), NumberKind(opt));
    }
    if (to != std::string::npos && IsNumber(bounds.substr(0, to), &lo) &&
        IsNumber(bounds.substr(to + kTo.size()), &hi)) {
      std::string give = hi >= std::numeric_limits<double>::max() / 2
                             ? (v >= lo ? fmt::format("more than {}", Bound(lo))
                                        : fmt::format("{} or more", Bound(lo)))
                             : fmt::format("{} to {}", Bound(lo), Bound(hi));
      return prefix + fmt::format("{}: {} is out of range: give {}", name, value, give);
    }
  }
  // CLI::IsMember: "X not in {a,b,c}".
  if (size_t at = rest.rfind(" not in {"); at != std::string::npos && rest.ends_with("}")) {
    std::string value = rest.substr(0, at);
    std::string list = rest.substr(at + 9, rest.size() - at - 10);
    std::vector<std::string> members;
    for (size_t pos = 0; pos <= list.size();) {
      size_t comma = std::min(list.find(',', pos), list.size());
      members.push_back(list.substr(pos, comma - pos));
      pos = comma + 1;
    }
    std::string near = Nearest(value, members);
    std::string members_text;
    for (const std::string& m : members) members_text += (members_text.empty() ? "" : ", ") + m;
    return prefix +
           fmt::format("{}: unknown value {}{}; one of: {}", name, Quoted(value),
                       near.empty() ? "" : fmt::format(" (did you mean {}?)", Quoted(near)),
                       members_text);
  }
  // Our own checks (sizes, the option table's values) speak for themselves.
  return prefix + (name.empty() ? LowerFirst(rest) : fmt::format("{}: {}", name, rest));
}

std::string Relation(const std::vector<const CLI::App*>& chain, const std::string& message) {
  for (auto [word, said] :
       {std::pair{" requires ", " needs "}, std::pair{" excludes ", " cannot go with "}}) {
    if (size_t at = message.find(word); at != std::string::npos) {
      std::string first = message.substr(0, at);
      return Prefix(FindOption(chain, first).first) + first + said +
             message.substr(at + std::string_view(word).size());
    }
  }
  return Prefix(chain.back()) + LowerFirst(message);
}

}  // namespace

std::string UsageErrorMessage(const CLI::App& app, const CLI::ParseError& error) {
  std::vector<const CLI::App*> chain = ParsedChain(app);
  std::string message = error.what();
  if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) {
    // The words are those of the deepest command left with some.
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      std::vector<std::string> words = (*it)->remaining();
      if (!words.empty()) return Prefix(*it) + Extras(*it, words);
    }
    // Words no command kept (the parse stopped at them): those of the message.
    std::vector<std::string> words;
    std::string_view listed = message;
    listed.remove_prefix(std::min(listed.size(), listed.find(": ") + 2));
    for (size_t pos = 0; pos < listed.size();) {
      size_t space = std::min(listed.find(' ', pos), listed.size());
      if (space > pos) words.emplace_back(listed.substr(pos, space - pos));
      pos = space + 1;
    }
    return Prefix(chain.back()) + Extras(chain.back(), words);
  } else if (dynamic_cast<const CLI::RequiredError*>(&error) != nullptr) {
    return Required(chain, message);
  } else if (dynamic_cast<const CLI::ArgumentMismatch*>(&error) != nullptr) {
    return Mismatch(chain, message);
  } else if (dynamic_cast<const CLI::ConversionError*>(&error) != nullptr) {
    return Conversion(chain, message);
  } else if (dynamic_cast<const CLI::ValidationError*>(&error) != nullptr) {
    return Validation(chain, message);
  } else if (dynamic_cast<const CLI::RequiresError*>(&error) != nullptr ||
             dynamic_cast<const CLI::ExcludesError*>(&error) != nullptr) {
    return Relation(chain, message);
  }
  return Prefix(chain.back()) + LowerFirst(message);
}

std::string UnknownLeadingOptionMessage(const CLI::App& app) {
  for (const CLI::App* cmd : ParsedChain(app)) {
    if (!cmd->get_prefix_command()) continue;
    std::vector<std::string> words = cmd->remaining();
    if (!words.empty() && LooksLikeOption(words.front())) {
      return Prefix(cmd) + UnknownOption(cmd, words.front());
    }
  }
  return "";
}

}  // namespace tv
