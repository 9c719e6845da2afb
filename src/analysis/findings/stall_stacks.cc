#include "analysis/findings/stall_stacks.h"

#include <fmt/format.h>

namespace tv {
namespace {

std::string Words(const std::string& waits_in) {
  if (waits_in == "collective") return "a collective";
  if (waits_in == "data-loader") return "its data loader";
  if (waits_in == "lock") return "a lock, condition or queue";
  if (waits_in == "io") return "I/O";
  if (waits_in == "sleep") return "a sleep";
  return "running code";
}

// "from /job/train.py:30 in main: `dist.all_reduce(t)`"
std::string From(const StackWait& w) {
  if (w.at.empty()) return "";
  return w.code.empty() ? fmt::format("from {}", w.at) : fmt::format("from {}: `{}`", w.at, w.code);
}

}  // namespace

Evidence StackEvidence(const StackWait& w) {
  Evidence e;
  e["waits_in"] = w.waits_in;
  for (const auto& [key, value] : {std::pair{"frame", &w.frame},
                                   {"at", &w.at},
                                   {"code", &w.code},
                                   {"stacks", &w.file},
                                   {"state", &w.state}}) {
    if (!value->empty()) e[key] = *value;
  }
  return e;
}

std::string StackSentence(const StackWait& w) {
  if (w.waits_in == "no-answer") {
    return fmt::format(" It did not answer when asked for its stacks (it is {}).", w.state);
  }
  std::string from = From(w);
  // The script's own line is the place: "at" it, not "from" it.
  size_t colon = w.at.rfind(" in ");
  std::string place = colon == std::string::npos ? w.at : w.at.substr(0, colon);
  if (!place.empty() && w.frame.ends_with(place + ")")) {
    from.replace(0, 4, "at");
    return fmt::format(" Its stacks: it waits in {} {}.", Words(w.waits_in), from);
  }
  return fmt::format(" Its stacks: it waits in {}, {}{}{}.", Words(w.waits_in), w.frame,
                     from.empty() ? "" : ", ", from);
}

std::string StackAdvice(const StackWait& w, Framework framework, int pid,
                        const std::vector<std::pair<int, StackWait>>& others) {
  std::string file = w.file.empty() ? "" : fmt::format(" ({} has every thread)", w.file);
  if (w.waits_in == "collective") {
    std::string elsewhere;
    for (const auto& [rank, o] : others) {
      if (o.waits_in == "collective") continue;
      elsewhere += fmt::format(
          "{} rank {} {}", elsewhere.empty() ? "" : ";", rank,
          o.waits_in == "no-answer"
              ? fmt::format("did not answer (it is {})", o.state)
              : fmt::format("waits in {} at {}", Words(o.waits_in), o.at.empty() ? o.frame : o.at));
    }
    std::string timeout =
        framework == Framework::kTorch || framework == Framework::kLightning ||
                w.frame.find("torch/distributed/") != std::string::npos
            ? "Set `TORCH_NCCL_ASYNC_ERROR_HANDLING=1` and a `timeout=` in "
              "`init_process_group` so a lost rank fails instead of hanging."
            : "Set your launcher's collective timeout so a lost rank fails instead of hanging.";
    return fmt::format("It waits in a collective that another rank never joined{}{}. {}",
                       elsewhere.empty() ? "" : ":", elsewhere, timeout);
  }
  if (w.waits_in == "data-loader") {
    std::string timeout = framework == Framework::kPaddle ? "`paddle.io.DataLoader(timeout=...)`"
                                                          : "`DataLoader(timeout=...)`";
    return fmt::format(
        "It waits for its next batch{}: a loader worker is stuck (in I/O, a lock, or a "
        "library that deadlocks after fork) or died without a word. `py-spy dump --pid` on "
        "the workers (the run's processes) shows which; {} makes a stuck worker raise instead "
        "of hanging.",
        file, timeout);
  }
  if (w.waits_in == "lock") {
    return fmt::format(
        "Its main thread waits on a lock, condition or queue{}: the thread that should release "
        "it waits for this one, or ended without releasing it. Look in the stacks for the "
        "thread that holds it; give waits a `timeout=` so a deadlock raises.",
        file);
  }
  if (w.waits_in == "io") {
    return fmt::format(
        "It waits in I/O{}: a file system, network share or remote store that does not "
        "answer. Check the mount (a dead NFS mount hangs `df` too) and give reads and requests "
        "a timeout.",
        file);
  }
  if (w.waits_in == "sleep") {
    return fmt::format(
        "It sleeps at {}: a polling loop whose condition never comes true, or a wait put in on "
        "purpose.",
        w.at.empty() ? w.frame : w.at);
  }
  if (w.waits_in == "running") {
    return fmt::format(
        "It is running but never reaches its next step{}: a loop that does not end, or a native "
        "call that does not return; `py-spy dump --native --pid {}` adds the C++ frames.",
        file, pid);
  }
  return "";
}

}  // namespace tv
