"""`trainvitals top` as a user sees it: in a real terminal (tmux), on the fake
driver with two GPUs, beside a `trainvitals run` of a real PyTorch loop with
markers; keys, resizing, a terminal too small, leaving it as it was; and the
plain `--once` and `--json` for scripts, with and without a GPU driver."""
import json
import os
import re
import shutil
import subprocess
import sys
import time
import uuid

import pytest

from conftest import HELPERS, ROOT, cli_path

FAKE = ROOT / "build" / "release" / "tests" / "fake_nvml" / "fake_nvml" / "libnvidia-ml.so.1"


class Session:
    """A `trainvitals run` of the PyTorch loop, and someone else's process on GPU 1."""

    def __init__(self, tmp_path):
        self.runtime = tmp_path / "runtime"
        self.runtime.mkdir(mode=0o700)
        self.other = subprocess.Popen(["sleep", "300"])
        scenario = {"driver_version": "550.54.15", "devices": [
            {"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-top-0",
             "series": {"util_gpu": 80, "memory_used_bytes": 5e9, "temperature_c": 66},
             "processes": [{"pid": "job", "memory_bytes": 4e9, "sm_util": 70}]},
            {"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-top-1",
             "series": {"util_gpu": 10, "memory_used_bytes": 31e9},
             "processes": [{"pid": "${OTHER_PID}", "memory_bytes": 3e10}]}]}
        path = tmp_path / "scenario.json"
        path.write_text(json.dumps(scenario))
        self.env = {**os.environ, "TRAINVITALS_NVML_LIBRARY": str(FAKE),
                    "FAKE_NVML_SCENARIO": str(path), "XDG_RUNTIME_DIR": str(self.runtime),
                    "OTHER_PID": str(self.other.pid),
                    "PYTHONPATH": str(ROOT / "python")}
        self.run = subprocess.Popen(
            [cli_path(), "run", "--quiet", "--out", str(tmp_path / "run"), "--name", "tiny-mlp",
             "--", sys.executable, str(HELPERS / "top_train.py")],
            env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # top finds the job on GPU 0 as the fake does: the run's lowest child.
        self.env["FAKE_NVML_JOB_ROOT"] = str(self.run.pid)
        sessions = self.runtime / "trainvitals" / "sessions"
        deadline = time.monotonic() + 60
        while not list(sessions.glob("*.json")) if sessions.exists() else True:
            assert time.monotonic() < deadline, "the run never announced itself"
            assert self.run.poll() is None, self.run.communicate()
            time.sleep(0.2)

    def close(self):
        for p in (self.run, self.other):
            p.terminate()
            p.wait(timeout=30)


class Tmux:
    """A terminal of its own: a tmux server on a private socket, one pane."""

    def __init__(self, env, columns=140, rows=40):
        if shutil.which("tmux") is None:
            pytest.fail("tmux is missing: `make deps` installs it")
        self.socket = f"tv-top-{uuid.uuid4().hex[:8]}"
        self.env = env
        self.tmux("new-session", "-d", "-x", str(columns), "-y", str(rows),
                  "env", "PS1=$ ", "bash", "--norc", "--noprofile")
        self.tmux("set-option", "-g", "status", "off")

    def tmux(self, *args):
        return subprocess.run(["tmux", "-L", self.socket, *args], env=self.env, check=True,
                              capture_output=True, text=True, timeout=20).stdout

    def keys(self, *keys):
        self.tmux("send-keys", *keys)

    def type(self, text):
        self.tmux("send-keys", "-l", text)
        self.tmux("send-keys", "Enter")

    def screen(self, escapes=False):
        return self.tmux("capture-pane", "-p", *(["-e"] if escapes else []))

    def wait_for(self, predicate, what, timeout=30):
        deadline = time.monotonic() + timeout
        while True:
            text = self.screen()
            if predicate(text):
                return text
            if time.monotonic() > deadline:
                pytest.fail(f"the screen never showed {what}:\n{text}")
            time.sleep(0.2)

    def resize(self, columns, rows):
        self.tmux("resize-window", "-x", str(columns), "-y", str(rows))

    def close(self):
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], env=self.env,
                       capture_output=True, timeout=20)


@pytest.fixture
def session(tmp_path):
    s = Session(tmp_path)
    yield s
    s.close()


@pytest.fixture
def terminal(session):
    env = {**session.env, "LANG": "C.UTF-8", "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    t = Tmux(env)
    yield t
    t.close()


def session_line(screen):
    lines = screen.splitlines()
    heading = next(i for i, l in enumerate(lines) if l.lstrip().startswith("PID MODE"))
    return lines[heading + 1]


def test_the_screen_shows_the_training_its_gpus_and_answers_the_keys(session, terminal):
    terminal.type("echo before top")
    terminal.type(f"{cli_path()} top")
    screen = terminal.wait_for(
        lambda s: "SESSIONS 1" in s and re.search(r"tiny-mlp .*\d+\.\d\d ", s) is not None
        and re.search(r"\s[1-9]\d*\s+\d+\s+\d+\.\d\d", session_line(s)) is not None,
        "the session with its epoch and steps/s")
    assert "trainvitals top" in screen.splitlines()[0]
    # PID MODE ELAPSED EPOCH STEP STEPS/S WAIT HEALTH CPU MEM NAME
    cells = session_line(screen).split()
    assert cells[1] == "run"
    epoch, step, rate = int(cells[3]), int(cells[4]), float(cells[5])
    assert epoch >= 1 and step >= 40
    assert 10 <= rate <= 45, cells  # paced at 40 steps/s, slower on a loaded machine
    gpu0 = next(l for l in screen.splitlines() if l.startswith("GPU 0 "))
    assert "NVIDIA H100 80GB HBM3" in gpu0 and "66°C" in gpu0
    assert "GPU 1 " in screen
    # The training's process: its job, GPU 0, the memory the driver gives it
    # and its SM share (the driver's per-process history is read every 5 s).
    # Matched by PID and job: the command is cut to the terminal's width.
    python_pid = None
    while python_pid is None:
        children = subprocess.run(["pgrep", "-P", str(session.run.pid)], capture_output=True,
                                  text=True).stdout.split()
        python_pid = children[0] if children else time.sleep(0.1)
    row = re.compile(rf"^\s*{python_pid} \S+\s+tiny-mlp\s+0\s+3\.73 GiB\s+70% ", re.M)
    screen = terminal.wait_for(lambda s: row.search(s) is not None,
                               "the training's process on GPU 0")
    lines = screen.splitlines()
    python = next(l for l in lines if row.search(l))
    other = next(l for l in lines if l.lstrip().startswith(f"{session.other.pid} "))
    assert re.search(r"\s-\s+1\s+27\.9 GiB", other), other  # no job: someone else's

    # Sorting: by GPU memory first (the other's 27.9 GiB above), then CPU.
    assert lines.index(other) < lines.index(python)
    terminal.keys("s")
    terminal.wait_for(lambda s: "sort: CPU" in s, "the CPU sort")
    terminal.keys("s", "s", "s")
    terminal.wait_for(lambda s: "sort: GPU memory" in s, "the sort back at GPU memory")

    # Filtering: `/`, a word, Enter; Esc clears it.
    terminal.keys("/")
    terminal.wait_for(lambda s: "filter: _" in s, "the filter prompt")
    terminal.type("sleep 300")
    screen = terminal.wait_for(lambda s: "PROCESSES 1 " in s and "filter: sleep 300" in s,
                               "only the filtered process")
    assert "tiny-mlp" not in screen.split("PROCESSES")[1]
    terminal.keys("Escape")
    terminal.wait_for(lambda s: "filter:" not in s and "tiny-mlp" in s.split("PROCESSES")[1],
                      "every process again")

    # A smaller terminal gets a smaller frame; one too small a line saying so.
    terminal.resize(72, 18)
    screen = terminal.wait_for(lambda s: "PROCESSES" in s and len(s.splitlines()) <= 18,
                               "the frame at 72x18")
    assert all(len(l) <= 72 for l in screen.splitlines())
    terminal.resize(40, 8)
    terminal.wait_for(lambda s: "terminal too small (40x8)" in s, "the too-small line")
    terminal.resize(140, 40)
    terminal.wait_for(lambda s: "SESSIONS 1" in s, "the full frame again")

    # q leaves the terminal as it was: the shell's lines back, top gone, exit 0.
    terminal.keys("q")
    screen = terminal.wait_for(lambda s: "SESSIONS" not in s, "the shell again")
    assert "before top" in screen
    terminal.type("echo exit=$?")
    terminal.wait_for(lambda s: "exit=0" in s, "top's exit code")
    assert session.run.poll() is None  # the training went on


def test_no_color_and_a_signal_leave_the_terminal_clean(session, terminal):
    terminal.type(f"{cli_path()} top --interval 0.5")
    screen = terminal.wait_for(lambda s: "SESSIONS 1" in s, "the frame")
    assert re.search(r"\x1b\[[0-9;]*3[0-7]m", terminal.screen(escapes=True)), "no colour"
    terminal.keys("C-c")
    terminal.wait_for(lambda s: "SESSIONS" not in s, "the shell after Ctrl-C")
    terminal.type(f"NO_COLOR=1 {cli_path()} top")
    terminal.wait_for(lambda s: "SESSIONS 1" in s, "the frame without colour")
    coloured = terminal.screen(escapes=True)
    assert not re.search(r"\x1b\[[0-9;]*(3|4)[0-7]m", coloured), coloured
    assert "\x1b[7m" in coloured or "\x1b[1m" in coloured  # reverse and bold stay
    pid = subprocess.run(["pgrep", "-f", f"^{cli_path()} top$"], capture_output=True,
                         text=True).stdout.split()
    assert len(pid) == 1, pid
    os.kill(int(pid[0]), 15)
    terminal.wait_for(lambda s: "SESSIONS" not in s, "the shell after SIGTERM")
    terminal.type("stty -a | grep -o ' echo ' ; echo done")
    terminal.wait_for(lambda s: " echo \n" in s or "done" in s, "stty")
    assert " echo " in terminal.screen()  # echo is back on
    # The terminal closing under it (a dropped ssh session) ends it too.
    terminal.type(f"{cli_path()} top")
    terminal.wait_for(lambda s: "SESSIONS 1" in s, "the frame once more")
    pid = subprocess.run(["pgrep", "-f", f"^{cli_path()} top$"], capture_output=True,
                         text=True).stdout.split()
    terminal.close()
    deadline = time.monotonic() + 10
    while os.path.exists(f"/proc/{pid[0]}") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not os.path.exists(f"/proc/{pid[0]}"), "top outlived its terminal"


def test_once_and_json_for_scripts(session):
    time.sleep(2.5)  # a couple of rows with steps/s
    once = subprocess.run([cli_path(), "top", "--once"], capture_output=True, text=True,
                          timeout=30, env={**session.env, "COLUMNS": "150"})
    assert once.returncode == 0, once.stderr
    assert "\x1b" not in once.stdout
    assert all(len(l) <= 150 for l in once.stdout.splitlines())
    assert "SESSIONS 1" in once.stdout and "tiny-mlp" in once.stdout
    assert "GPU 1 " in once.stdout
    out = subprocess.run([cli_path(), "top", "--json"], capture_output=True, text=True,
                         timeout=30, env=session.env)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert [g["index"] for g in doc["gpus"]] == [0, 1]
    assert doc["gpus"][0]["sessions_memory_bytes"] == 4e9
    [s] = doc["sessions"]
    assert s["name"] == "tiny-mlp" and s["mode"] == "run" and s["pid"] == session.run.pid
    assert 10 <= s["steps_per_second"] <= 45 and s["epoch"] is not None
    job = [p for p in doc["processes"] if p["session_pid"] == session.run.pid]
    assert any("top_train.py" in p["command"] and p["gpus"] == [0] for p in job), job
    assert 0 < doc["host"]["cpu_util_ratio"] <= 1


def test_host_only_without_a_driver_and_without_a_terminal(tmp_path):
    runtime = tmp_path / "rt"
    runtime.mkdir(mode=0o700)
    env = {**os.environ, "TRAINVITALS_NVML_LIBRARY": str(tmp_path / "no-libnvidia-ml.so"),
           "XDG_RUNTIME_DIR": str(runtime), "COLUMNS": "300"}
    once = subprocess.run([cli_path(), "top", "--once"], capture_output=True, text=True,
                          timeout=30, env=env)
    assert once.returncode == 0, once.stderr
    gpu = next(l for l in once.stdout.splitlines() if l.startswith("GPU "))
    assert "no NVIDIA driver library" in gpu and "no-libnvidia-ml.so" in gpu, gpu  # why none
    assert "SESSIONS 0  none running" in once.stdout
    assert re.search(r"^CPU .* \d+%", once.stdout, re.M)
    host_only = subprocess.run([cli_path(), "top", "--once", "--no-gpus"], capture_output=True,
                               text=True, timeout=30, env=env)
    assert "GPU  not read (--no-gpus)" in host_only.stdout
    plain = subprocess.run([cli_path(), "top"], capture_output=True, text=True, timeout=30,
                           env=env, stdin=subprocess.DEVNULL)
    assert plain.returncode == 2
    assert "needs a terminal" in plain.stderr and "--once" in plain.stderr
