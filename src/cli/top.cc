// trainvitals top [--interval S] [--once] [--json]: the machine, its GPUs and
// the trainvitals sessions running on it, live in the terminal.
#include <fmt/format.h>
#include <langinfo.h>
#include <ncurses.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <clocale>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "cli/commands.h"
#include "cli/json_out.h"
#include "cli/top_screen.h"
#include "core/clock.h"
#include "run/top_feed.h"
#include "views/top/top_frame.h"
#include "views/top/top_json.h"

namespace tv {
namespace {

volatile std::sig_atomic_t g_stop = 0;

void OnStopSignal(int) { g_stop = 1; }

// Rates (CPU, disks, network, each process's CPU) need two readings: the
// first frame waits this long for its second.
constexpr double kFirstGap_s = 0.5;

int PlainColumns() {
  if (const char* env = std::getenv("COLUMNS"); env != nullptr && std::atoi(env) > 0) {
    return std::atoi(env);
  }
  winsize ws{};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 120;
}

// Applies `key`; false when it asks to quit.
bool HandleKey(int key, const TopModel& model, int page, TopUi* ui) {
  if (ui->editing_filter) {
    if (key == 27) {  // Esc
      ui->filter.clear();
      ui->editing_filter = false;
    } else if (key == '\r' || key == '\n' || key == KEY_ENTER) {
      ui->editing_filter = false;
    } else if (key == KEY_BACKSPACE || key == 127 || key == 8) {
      if (!ui->filter.empty()) ui->filter.pop_back();
    } else if (key >= 32 && key < 127) {
      ui->filter += static_cast<char>(key);
    }
    return true;
  }
  switch (key) {
    case 'q':
    case 'Q':
      return false;
    case KEY_UP:
    case 'k':
      MoveSelection(model, -1, ui);
      break;
    case KEY_DOWN:
    case 'j':
      MoveSelection(model, 1, ui);
      break;
    case KEY_PPAGE:
      MoveSelection(model, -page, ui);
      break;
    case KEY_NPAGE:
      MoveSelection(model, page, ui);
      break;
    case KEY_HOME:
      MoveSelection(model, -1 << 20, ui);
      break;
    case KEY_END:
      MoveSelection(model, 1 << 20, ui);
      break;
    case 's':
      ui->sort = static_cast<TopSort>((static_cast<int>(ui->sort) + 1) % kTopSorts);
      break;
    case 't':
      ui->tree = !ui->tree;
      break;
    case '/':
      ui->editing_filter = true;
      break;
    case 27:
      ui->filter.clear();
      break;
    default:
      break;
  }
  return true;
}

int Interactive(TopFeed& feed, double interval_s) {
  std::string error;
  auto screen = TopScreen::Open(&error);
  if (!screen) {
    fmt::print(stderr, "trainvitals: top: {}\n", error);
    return 2;
  }
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGHUP, &sa, nullptr);
  Clock* clock = Clock::Default();
  TopUi ui;
  TopHistory history;
  TopModel model = feed.Next();
  double next = clock->MonotonicSeconds() + kFirstGap_s;
  auto draw = [&] {
    screen->FollowSize();
    screen->Draw(
        RenderTop(model, history, &ui, screen->columns(), screen->rows(), screen->unicode()));
  };
  draw();
  int instant_returns = 0;  // waits that ended at once with no key: a terminal gone
  while (g_stop == 0 && instant_returns < 100) {
    double now = clock->MonotonicSeconds();
    if (now >= next) {
      model = feed.Next();
      history.Add(model);
      next = now + interval_s;
      draw();
      continue;
    }
    // Short waits, so a signal is noticed within a tenth of a second.
    // Whole milliseconds, at least one: a wait rounded to none would spin.
    double wait = std::clamp(std::ceil((next - now) * 1000), 1.0, 100.0) / 1000;
    int key = screen->ReadKey(wait);
    bool instant = wait >= 0.02 && clock->MonotonicSeconds() - now < wait / 4;
    instant_returns = key < 0 && instant ? instant_returns + 1 : 0;
    if (key < 0) {
      if (screen->FollowSize()) draw();  // resized: at once, not at the next refresh
      continue;
    }
    if (!HandleKey(key, model, std::max(1, screen->rows() - 12), &ui)) break;
    draw();
  }
  return 0;
}

}  // namespace

void AddTopCommand(CLI::App& app, Action* action) {
  auto* cmd = app.add_subcommand(
      "top",
      "Show the machine live: each GPU (busy, SM, memory of the jobs and of others, temperature, "
      "power, throttling) with its processes, the host, and every trainvitals session running "
      "here with its epoch, steps/s, data-wait share, health, findings and alerts.");
  auto interval = std::make_shared<double>(1.0);
  auto once = std::make_shared<bool>(false);
  auto json = std::make_shared<bool>(false);
  auto no_gpus = std::make_shared<bool>(false);
  cmd->add_option("--interval", *interval, "Seconds between refreshes")
      ->type_name("SECONDS")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  cmd->add_flag("--once", *once, "Print one frame as plain text and exit (for scripts)");
  cmd->add_flag("--json", *json, "Print one refresh as JSON and exit");
  cmd->add_flag("--no-gpus", *no_gpus, "Show the host only; do not load the GPU driver");
  cmd->callback([=] {
    *action = [=]() {
      // main() holds these for `run`'s supervisor; top ends on them.
      sigset_t set;
      sigemptyset(&set);
      for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGWINCH, SIGTSTP, SIGCONT}) sigaddset(&set, sig);
      ::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
      TopFeed feed(!*no_gpus);
      if (*once || *json) {
        feed.Next();
        std::this_thread::sleep_for(std::chrono::duration<double>(kFirstGap_s));
        TopModel model = feed.Next();
        if (*json) {
          PrintJson(TopJson(model));
          return 0;
        }
        std::setlocale(LC_ALL, "");
        bool unicode = std::string(::nl_langinfo(CODESET)) == "UTF-8";
        TopUi ui;
        TopHistory history;
        history.Add(model);
        std::cout << TopText(RenderTop(model, history, &ui, PlainColumns(), 0, unicode));
        return 0;
      }
      if (!::isatty(STDIN_FILENO) || !::isatty(STDOUT_FILENO)) {
        fmt::print(stderr,
                   "trainvitals: top: needs a terminal; `trainvitals top --once` prints one frame "
                   "and `--json` one refresh as JSON\n");
        return 2;
      }
      return Interactive(feed, *interval);
    };
  });
}

}  // namespace tv
