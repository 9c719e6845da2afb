// trainvitals profile RUN|PID [--steps N] [--rank R] [--json]: asks a running
// job to profile its next steps with its framework's profiler, now, and says
// where each trace went and what it shows (run/session_request.h).
#include <fmt/format.h>

#include "cli/ask_job.h"
#include "cli/commands.h"

namespace tv {
namespace {

constexpr double kSettle_s = 2;  // ranks finish their captures within this of each other

std::string Percent(const std::optional<double>& share) {
  return share ? fmt::format("{:.0f}%", *share * 100) : std::string("-");
}

void PrintCapture(const TrainingEvent& e, const std::string& run_dir) {
  const ProfileCapture& p = *e.profile;
  fmt::print("{}: {} steps in {:.1f} s: {}/{}\n", ProcessWords(e), p.steps, p.seconds.value_or(0),
             run_dir, p.dir);
  if (!p.trace_error.empty()) {
    fmt::print("  trace not read: {}\n", p.trace_error);
    return;
  }
  const TraceFigures& f = p.figures;
  fmt::print("  step {:.3f} s; data loader {}, host-to-device copies {}, GPU idle {}\n",
             f.step_s.value_or(0), Percent(f.data_loader_share), Percent(f.h2d_share),
             Percent(f.gpu_idle_share));
  for (const auto& [label, top] :
       {std::pair{"top operators", &f.top_ops}, {"top GPU kernels", &f.top_kernels}}) {
    std::string names;
    for (const auto& [name, share] : *top) {
      names += fmt::format("{}{} {:.0f}%", names.empty() ? "" : ", ", name, share * 100);
    }
    if (!names.empty()) fmt::print("  {}: {}\n", label, names);
  }
}

}  // namespace

void AddProfileCommand(CLI::App& app, Action* action) {
  auto* cmd = app.add_subcommand(
      "profile",
      "Ask a running job to profile its next steps with its framework's profiler "
      "(torch.profiler, tf.profiler, paddle.profiler), now: each training process writes its "
      "trace under the run directory's profiles/, and its line says what the trace shows.");
  auto target = std::make_shared<std::string>();
  auto steps = std::make_shared<int>(20);
  auto rank = std::make_shared<int>(-1);
  auto timeout = std::make_shared<double>(300);
  auto json = std::make_shared<bool>(false);
  AddJobOptions(cmd, "profile", target.get(), json.get());
  cmd->add_option("--steps", *steps, "How many steps to profile")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  cmd->add_option("--rank", *rank, "Only this rank (default: every training process)")
      ->check(CLI::Range(0, 1 << 24));
  cmd->add_option("--timeout", *timeout, "Seconds to wait for the traces")
      ->check(CLI::Range(1.0, 86400.0))
      ->capture_default_str();
  cmd->callback([=] {
    *action = [=]() {
      JobAsk ask{.command = "profile",
                 .target = *target,
                 .request = Marker{.steps = *steps, .what = "profile", .target = *rank},
                 .wait_s = *timeout,
                 .settle_s = kSettle_s,
                 .none_came =
                     "no training process took a profile (it needs the trainvitals "
                     "Python package, a callback or monitor(), with its framework's "
                     "profiler loaded, and must still be stepping)",
                 .json = *json};
      return AskRunningJob(ask, PrintCapture);
    };
  });
}

}  // namespace tv
