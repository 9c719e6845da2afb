"""The live status line in a real terminal: `trainvitals run` on a pty, and what
the pty received replayed through a terminal emulator (pyte). The training's own
output, lines and `\\r` progress bars, must come out intact, with one status row
kept at the bottom during the run, and the terminal given back whole on every
way out."""
import fcntl
import os
import pty
import re
import select
import shlex
import signal
import struct
import subprocess
import sys
import termios
import time

import pytest

from conftest import ROOT, cli_path

pyte = pytest.importorskip("pyte")

FAKE = ROOT / "build" / "release" / "tests" / "fake_nvml" / "fake_nvml" / "libnvidia-ml.so.1"
SCENARIOS = ROOT / "tests" / "fake_nvml" / "scenarios"
ROWS = 40
STATUS = re.compile(r"^trainvitals (\d+\.\d s|\d+:\d\d(:\d\d)?)( \||$)")

# Prints 12 lines, says it is done, and lingers so that the status row is drawn again.
LINES = ("import sys, time\n"
         "for i in range(12):\n"
         "    print(f'epoch {i + 1}/12: loss {0.9 / (i + 1):.4f} - accuracy {0.5 + i / 30:.4f}', flush=True)\n"
         "    time.sleep(0.08)\n"
         "print('training printed all', flush=True)\n"
         "time.sleep(2.4)\n")
LINES_EXPECTED = [f"epoch {i + 1}/12: loss {0.9 / (i + 1):.4f} - accuracy {0.5 + i / 30:.4f}"
                  for i in range(12)]

# A Keras/tqdm-style bar redrawn with "\r", then its final state and a newline.
BAR = ("import sys, time\n"
       "for i in range(41):\n"
       "    sys.stdout.write(f'\\r{i * 5:3d}/200 [{\"=\" * i:<40}] - loss: {2 / (i + 1):.4f}')\n"
       "    sys.stdout.flush()\n"
       "    time.sleep(0.06)\n"
       "print()\n"
       "print('training printed all', flush=True)\n"
       "time.sleep(2.4)\n")
BAR_EXPECTED = [f"200/200 [{'=' * 40}] - loss: {2 / 41:.4f}"]

GPUS = {
    0: {"TRAINVITALS_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1"},
    1: {"TRAINVITALS_NVML_LIBRARY": str(FAKE), "FAKE_NVML_SCENARIO": str(SCENARIOS / "leak.json")},
    8: {"TRAINVITALS_NVML_LIBRARY": str(FAKE), "FAKE_NVML_SCENARIO": str(SCENARIOS / "eight_gpus.json")},
}


class Pty:
    """A program on a new pty of `cols` x ROWS, as a terminal would run it."""

    def __init__(self, argv, cols, env, stdin_null=False):
        self.cols = cols
        self.data = b""
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, cols, 0, 0))
            if stdin_null:  # trainvitals then keeps the terminal's foreground
                os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
            # As a terminal's shell starts a command: Ctrl-C's signals at their
            # defaults, even when these tests were started with them ignored
            # (a background job of a script).
            for sig in (signal.SIGINT, signal.SIGQUIT):
                signal.signal(sig, signal.SIG_DFL)
            os.execve(argv[0], argv, env)
        self.status = None

    def read_for(self, seconds, until=None):
        """Reads what the program writes, for `seconds` or until `until` is seen."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if until is not None and until in self.data:
                return True
            ready, _, _ = select.select([self.fd], [], [], 0.05)
            if ready:
                try:
                    chunk = os.read(self.fd, 65536)
                except OSError:
                    return False
                if not chunk:
                    return False
                self.data += chunk
        return until is None

    def finish(self, timeout=60):
        self.read_for(timeout, until=b"\x00never")
        _, self.status = os.waitpid(self.pid, 0)
        os.close(self.fd)
        return self.data

    def send(self, keys):
        os.write(self.fd, keys)

    def screen(self):
        screen = pyte.HistoryScreen(self.cols, ROWS, history=5000)
        pyte.ByteStream(screen).feed(self.data)
        return screen


def tv_env(gpus=0, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRAINVITALS", "FAKE_NVML"))}
    env.update({"TERM": "xterm-256color", **GPUS[gpus], **extra})
    return env


def run_argv(tmp_path, script, *flags):
    return [cli_path(), "run", "--out", str(tmp_path / "run"), "--interval", "0.3", *flags, "--",
            sys.executable, "-c", script]


def rows(screen):
    return [line.rstrip() for line in screen.display]


def scrolled_and_rows(screen):
    """What scrolled off the top, then the screen."""
    gone = ["".join(line[x].data for x in range(screen.columns)).rstrip()
            for line in screen.history.top]
    return gone + rows(screen)


def status_rows(screen):
    return [i for i, line in enumerate(rows(screen)) if STATUS.match(line)]


def assert_output_intact(lines, expected):
    """Each expected line is a whole row of its own, in order, untouched
    (trainvitals' own lines, a notice or an epoch line, may come between)."""
    at = [lines.index(e) if e in lines else -1 for e in expected]
    assert -1 not in at, "\n".join(lines)
    assert at == sorted(at), "\n".join(lines)


# Each kind of output, width and number of GPUs in make test; the other
# combinations in make test-slow.
COVERING = {("lines", 80, 0), ("lines", 200, 8), ("bar", 80, 8), ("bar", 200, 1)}
LAYOUTS = [(kind, cols, gpus) if (kind, cols, gpus) in COVERING
           else pytest.param(kind, cols, gpus, marks=pytest.mark.slow)
           for kind in ("lines", "bar") for cols in (80, 200) for gpus in (0, 1, 8)]


@pytest.mark.parametrize("kind, cols, gpus", LAYOUTS)
def test_training_output_stays_intact_under_one_status_row(tmp_path, gpus, cols, kind):
    script, expected = (LINES, LINES_EXPECTED) if kind == "lines" else (BAR, BAR_EXPECTED)
    term = Pty(run_argv(tmp_path, script), cols, tv_env(gpus))
    assert term.read_for(30, until=b"training printed all"), term.data
    term.read_for(1.2)  # the status row is drawn again after the last line
    during = term.screen()
    lines = rows(during)
    assert status_rows(during) == [ROWS - 1], "\n".join(lines)
    status = lines[ROWS - 1]
    assert len(status) <= cols - 1, status
    assert during.margins is not None and (during.margins.top, during.margins.bottom) == (0, ROWS - 2)
    assert_output_intact(lines, expected)
    if gpus == 8:
        assert "8 GPUs: busy 88–93%, mem 61–65 GiB" in status, status
    elif gpus == 1:
        assert "| GPU0 " in status, status

    data = term.finish()
    assert os.waitstatus_to_exitcode(term.status) == 0, data
    end = term.screen()
    lines = scrolled_and_rows(end)
    assert status_rows(end) == [], "\n".join(lines)
    assert not [line for line in lines if STATUS.match(line)], "\n".join(lines)
    assert end.margins is None  # the whole screen scrolls again
    assert_output_intact(lines, expected)
    assert any("exit code 0" in line for line in lines), "\n".join(lines)
    assert b"RAM 0 B" not in data  # the row after the job ended is not shown
    if gpus == 0:  # what cannot be measured: one line
        notices = [line for line in lines if line.startswith("trainvitals: not measured")]
        assert len(notices) == 1 and "GPU (no NVIDIA driver library" in notices[0], "\n".join(lines)


def after_exit_lines_fill_the_screen(term):
    """The shell's output after trainvitals: it must scroll over the whole
    screen, down to the bottom row (where the cursor waits after the last
    newline); within a region left set, it would stop a row higher."""
    end = term.screen()
    lines = rows(end)
    assert end.margins is None, "\n".join(lines)
    assert lines[ROWS - 2:] == ["after 60", ""] and end.cursor.y == ROWS - 1, "\n".join(lines)
    assert status_rows(end) == [], "\n".join(lines)


SHELL_AFTER = "; i=1; while [ $i -le 60 ]; do echo after $i; i=$((i+1)); done"


def test_terminal_is_restored_after_a_normal_exit(tmp_path):
    argv = run_argv(tmp_path, "import time; print('hi', flush=True); time.sleep(1)")
    command = shlex.join(argv)
    term = Pty(["/bin/sh", "-c", command + SHELL_AFTER], 80, tv_env())
    term.finish()
    after_exit_lines_fill_the_screen(term)


def test_terminal_is_restored_after_ctrl_c(tmp_path):
    argv = run_argv(tmp_path, "import time; print('ready', flush=True); time.sleep(30)")
    command = shlex.join(argv)
    term = Pty(["/bin/sh", "-c", command + SHELL_AFTER], 80, tv_env())
    assert term.read_for(30, until=b"ready")
    term.read_for(0.8)
    assert status_rows(term.screen()) == [ROWS - 1]
    term.send(b"\x03")  # Ctrl-C: SIGINT to the training's process group
    term.finish()
    assert b"KeyboardInterrupt" in term.data
    after_exit_lines_fill_the_screen(term)


@pytest.mark.parametrize("how", ["SIGINT", "SIGTERM", "SIGHUP", "crash"])
def test_terminal_is_restored_after_a_signal_or_a_crash(tmp_path, how):
    if how == "crash":
        script = "import os, signal, time; print('ready', flush=True); time.sleep(1); os.kill(os.getpid(), signal.SIGSEGV)"
    else:
        script = "import time; print('ready', flush=True); time.sleep(30)"
    term = Pty(run_argv(tmp_path, script), 80, tv_env())
    assert term.read_for(30, until=b"ready")
    term.read_for(0.8)
    assert status_rows(term.screen()) == [ROWS - 1]
    if how != "crash":
        os.kill(term.pid, getattr(signal, how))  # to trainvitals: forwarded to the training
    term.finish()
    end = term.screen()
    assert end.margins is None, "\n".join(rows(end))
    assert status_rows(end) == [], "\n".join(rows(end))
    expected = 128 + (signal.SIGSEGV if how == "crash" else getattr(signal, how))
    assert os.waitstatus_to_exitcode(term.status) == expected


def test_ctrl_z_gives_the_terminal_back_and_fg_takes_the_row_again(tmp_path):
    script = ("import time\nprint('ready', flush=True)\ntime.sleep(2)\n"
              "print('after fg', flush=True)\ntime.sleep(1)\n")
    term = Pty(run_argv(tmp_path, script), 80, tv_env())
    assert term.read_for(30, until=b"ready")
    term.read_for(0.8)
    term.send(b"\x1a")  # Ctrl-Z: SIGTSTP to the training's process group
    deadline = time.monotonic() + 20
    status = None
    while time.monotonic() < deadline:
        term.read_for(0.1)
        pid, status = os.waitpid(term.pid, os.WUNTRACED | os.WNOHANG)
        if pid:
            break
    assert status is not None and os.WIFSTOPPED(status), "trainvitals did not stop with its job"
    term.read_for(0.3)
    stopped = term.screen()
    assert stopped.margins is None, "\n".join(rows(stopped))  # the shell gets the whole screen
    assert status_rows(stopped) == []
    os.kill(term.pid, signal.SIGCONT)  # what `fg` sends
    assert term.read_for(30, until=b"after fg"), term.data
    term.read_for(0.8)
    again = term.screen()
    assert status_rows(again) == [ROWS - 1], "\n".join(rows(again))
    term.finish()
    assert os.waitstatus_to_exitcode(term.status) == 0, term.data
    assert term.screen().margins is None


def wait_stopped(pid, seconds=20):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        got, status = os.waitpid(pid, os.WUNTRACED | os.WNOHANG)
        if got:
            return os.WIFSTOPPED(status)
        time.sleep(0.05)
    return False


def test_tstp_stops_the_job_and_trainvitals_when_it_kept_the_terminal(tmp_path):
    script = "import time\nprint('ready', flush=True)\ntime.sleep(2)\nprint('after cont', flush=True)\n"
    term = Pty(run_argv(tmp_path, script), 80, tv_env(), stdin_null=True)
    assert term.read_for(30, until=b"ready")
    term.read_for(0.5)
    os.kill(term.pid, signal.SIGTSTP)  # what Ctrl-Z sends when trainvitals has the foreground
    assert wait_stopped(term.pid), "trainvitals did not stop with its job"
    term.read_for(0.3)
    assert term.screen().margins is None
    os.kill(term.pid, signal.SIGCONT)
    assert term.read_for(30, until=b"after cont"), term.data
    term.finish()
    assert os.waitstatus_to_exitcode(term.status) == 0, term.data


def test_a_resize_moves_the_status_row_to_the_new_bottom(tmp_path):
    script = "import time; print('ready', flush=True); time.sleep(3)"
    term = Pty(run_argv(tmp_path, script), 80, tv_env())
    assert term.read_for(30, until=b"ready")
    term.read_for(0.8)
    fcntl.ioctl(term.fd, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, 60, 0, 0))
    os.kill(term.pid, signal.SIGWINCH)
    mark = len(term.data)
    term.read_for(1.0)
    redrawn = term.data[mark:]
    # The region is set again and the line is cut to the new width.
    assert f"\x1b[1;{ROWS - 1}r".encode() in redrawn, redrawn
    screen = pyte.Screen(60, ROWS)
    pyte.ByteStream(screen).feed(term.data)
    assert len(rows(screen)[ROWS - 1]) <= 59
    term.finish()


@pytest.mark.parametrize("term_value", ["dumb", None])
def test_no_live_line_on_a_dumb_terminal(tmp_path, term_value):
    env = tv_env()
    if term_value is None:
        del env["TERM"]
    else:
        env["TERM"] = term_value
    term = Pty(run_argv(tmp_path, "import time; time.sleep(1.2)"), 80, env)
    data = term.finish()
    assert b"\x1b" not in data, data
    assert b"exit code 0" in data


def test_renumbered_gpu_shows_its_physical_index(tmp_path):
    env = tv_env(1, CUDA_VISIBLE_DEVICES="1",
                 FAKE_NVML_SCENARIO=str(SCENARIOS / "two_gpus.json"))
    term = Pty(run_argv(tmp_path, "import time; print('ready', flush=True); time.sleep(1.5)"), 200, env)
    assert term.read_for(30, until=b"ready")
    term.read_for(1.0)
    status = rows(term.screen())[ROWS - 1]
    assert "| GPU0 (phys 1) " in status, status
    term.finish()


def test_the_summary_wraps_at_words_within_a_narrow_terminal(tmp_path):
    """At 60 columns every summary line fits, broken between words and continued
    under its label; piped, the same summary keeps whole lines."""
    script = "import time; time.sleep(1.5)"
    term = Pty(run_argv(tmp_path, script), 60, tv_env(1))
    term.finish()
    lines = scrolled_and_rows(term.screen())
    start = next(i for i, line in enumerate(lines)
                 if line.startswith("trainvitals: ") and "not measured" not in line)
    summary = [line for line in lines[start:] if line]
    assert all(len(line) <= 60 for line in summary), "\n".join(summary)
    gpu = next(i for i, line in enumerate(summary) if line.startswith("  GPU0"))
    assert summary[gpu + 1].startswith(" " * 11) and summary[gpu + 1][11] != " ", summary[gpu:gpu + 3]
    piped = subprocess.run(run_argv(tmp_path / "piped", script), capture_output=True, text=True,
                           env=tv_env(1), timeout=60)
    gpu_line = next(line for line in piped.stderr.splitlines() if line.startswith("  GPU0"))
    assert len(gpu_line) > 60, piped.stderr
    # The words of the wrapped GPU line, rejoined, are the piped line's words.
    wrapped = [summary[gpu]]
    for line in summary[gpu + 1:]:
        if not line.startswith(" " * 11):
            break
        wrapped.append(line)
    def words(text):  # the words without figures: the runs' numbers differ
        return [w for w in text.split() if not any(c.isdigit() for c in w)]
    assert words(" ".join(wrapped)) == words(gpu_line), (wrapped, gpu_line)
