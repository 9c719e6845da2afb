// trainvitals run [options] -- COMMAND [ARGS...]
#include <fmt/format.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "cli/child.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "markers/protocol.h"
#include "run/gpu_claim.h"
#include "run/job_cgroup.h"
#include "run/session.h"
#include "run/sources.h"
#include "sources/gpu_opening.h"
#include "views/terminal_row.h"

namespace tv {
namespace {

// How long the processes the command left may take to end before those still
// running are said to have outlived it.
constexpr double kLeftoversGraceS = 0.5;

// CLI11's usage line cannot show the command after "--": one line of our own.
class RunUsage : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App*, std::string) const override {
    return "Usage: trainvitals run [OPTIONS] [--] COMMAND [ARGS...]\n";
  }
};

}  // namespace

void AddRunCommand(CLI::App& app, const std::vector<std::string>& after_dashes, Action* action) {
  auto* cmd = app.add_subcommand(
      "run",
      "Run COMMAND, monitor it and its whole process tree, write a run directory and print a "
      "summary. Exits with COMMAND's own exit code (128+N if it died of signal N). Training "
      "processes using the trainvitals Python package report steps, epochs and phases to it "
      "through TRAINVITALS_SOCKET (docs/markers.md).");
  auto options = std::make_shared<MonitorOptions>();
  auto command = std::make_shared<std::vector<std::string>>();
  options->AddTo(cmd);
  cmd->prefix_command();  // everything from COMMAND on is the command's own
  cmd->formatter(std::make_shared<RunUsage>());
  cmd->footer("Example: trainvitals run --interval 2 -- python train.py --epochs 5");
  cmd->callback([cmd, options, command, action, &after_dashes] {
    *command = cmd->remaining();
    if (!command->empty() && !after_dashes.empty()) {
      throw CLI::ExtrasError("run", *command);
    }
    if (command->empty()) *command = after_dashes;
    if (command->empty()) throw CLI::RequiredError("COMMAND (give it after --)");
    *action = [options, command]() -> int {
      Config config = options->Resolve();
      CheckGpuChoice(config);
      // --gpus auto:N: the job's GPUs, held until it ends (the claim outlives the session).
      std::optional<GpuClaim> claim;
      if (config.gpus_auto > 0) {
        claim.emplace(GpuClaim::Claim(config.gpus_auto, ""));
        ::setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
        ::setenv("CUDA_VISIBLE_DEVICES", claim->visible_devices().c_str(), 1);
        for (const std::string& why : claim->skipped()) {
          fmt::print(stderr, "trainvitals: --gpus auto:{}: skipped {}\n", config.gpus_auto, why);
        }
        if (!config.quiet) {
          fmt::print(stderr, "trainvitals: --gpus auto:{}: CUDA_VISIBLE_DEVICES={}\n",
                     config.gpus_auto, claim->visible_devices());
        }
      }
      // The bottom row is reserved before the child writes anything, and
      // released on every way out: Finish, the destructors, Ctrl-Z.
      std::unique_ptr<TerminalRow> row;
      if (!config.quiet) row = TerminalRow::Open(STDERR_FILENO);
      Session session(config, *command, "run");
      // The child tree reports steps, epochs and phases here (docs/markers.md).
      if (std::string socket = session.marker_socket(); !socket.empty()) {
        ::setenv(kMarkerSocketEnv, socket.c_str(), 1);
      }
      // Where the training's own files go (an on_oom_risk="checkpoint"'s checkpoint).
      ::setenv(kRunDirEnv, session.run_dir().c_str(), 1);
      std::string error;
      if (row) row->Reserve();
      // The job inherits the GPU locks: they stay held while any of its
      // processes lives, even if trainvitals itself is killed.
      std::vector<int> inherit;
      if (claim) inherit = claim->inherited_fds();
      // The job's own cgroup, where this machine lets us make one: its totals
      // from one file each, whatever the number of its processes.
      JobCgroup cgroup = JobCgroup::Make(fmt::format("trainvitals-{}", ::getpid()));
      auto not_started = [&](int code) {
        if (row) row->Release();
        session.Abandon();
        fmt::print(stderr, "{}\n", error);
        return code;
      };
      ForkedChild forked = ForkChild(*command, inherit, &cgroup, &error);
      if (forked.pid < 0) return not_started(1);
      // While the command's exec runs, the GPU driver and the run history open
      // on threads of their own (threads after the fork: at a pids limit the
      // command goes first).
      std::shared_ptr<GpuOpening> gpus = GpuOpening::Start(RunGpuOptions(config));
      session.OpenHistory();
      if (int code = AwaitExec(forked, command->front(), &error); code != 0) {
        return not_started(code);
      }
      int child = forked.pid;
      session.ShowLiveStatus(row.get());
      JobCgroupView own = cgroup.view();
      session.Start(child, &own, gpus.get());
      SupervisorHooks hooks;
      hooks.on_signal = [&](int sig) {
        session.AddEvent(EventType::kSignalForwarded,
                         {{"signal", sig}, {"name", sigabbrev_np(sig)}});
      };
      if (row) {
        hooks.on_stop = [&] { row->Release(); };
        hooks.on_continue = [&] { row->Reserve(); };
        hooks.on_tick = [&] { row->Follow(); };
      }
      hooks.on_kill = [&](const char* reason, double after_s) {
        bool second = std::string_view(reason) == "second_signal";
        fmt::print(stderr, "trainvitals: {}: sending SIGKILL to the command's processes\n",
                   second ? "a second signal"
                          : fmt::format("the command still runs {:.0f} s after the first signal "
                                        "(--kill-after)",
                                        after_s));
        session.AddEvent(EventType::kKillEscalated, {{"reason", reason},
                                                     {"after_s", after_s},
                                                     {"signal", SIGKILL},
                                                     {"name", sigabbrev_np(SIGKILL)}});
      };
      ChildExit exit = SuperviseChild(child, hooks, ForceEnd{config.kill_after_s});
      ReapLeftovers(kLeftoversGraceS);
      session.Finish(exit.code, exit.signal);
      if (std::string left = cgroup.Remove(); !left.empty()) {
        fmt::print(stderr, "trainvitals: the job's cgroup stays: {}\n", left);
      }
      return exit.code;
    };
  });
}

}  // namespace tv
