"""Small things people trip on at the command line: usage, config errors, the
`latest` run, stale marker directories, the command as typed, notices said once,
attach to one's own shell."""
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from conftest import HELPERS, ROOT, read_jsonl

ENV = {"PYTHONPATH": str(ROOT / "python")}


def tv_run(tv, *args, cwd=None, env=None, timeout=60):
    return subprocess.run([tv, *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout, env={**os.environ, **(env or {})})


def test_run_help_prints_one_usage_line(tv):
    p = tv_run(tv, "run", "--help")
    assert p.returncode == 0
    usage = [line for line in p.stdout.splitlines() if "Usage" in line]
    assert usage == ["Usage: trainvitals run [OPTIONS] [--] COMMAND [ARGS...]"], p.stdout


def test_config_typo_suggests_the_near_key_and_a_missing_file_says_so(tv, tmp_path):
    config = tmp_path / "tv.toml"
    config.write_text("intervall = 2\n")
    p = tv_run(tv, "run", "--config", config, "--out", tmp_path / "r", "--", "true")
    assert p.returncode == 2
    assert p.stderr.strip() == (f"trainvitals: {config}:1: unknown key 'intervall' "
                                "(did you mean 'interval'?)")
    missing = tmp_path / "nope.toml"
    p = tv_run(tv, "run", "--config", missing, "--out", tmp_path / "r", "--", "true")
    assert p.returncode == 2
    assert p.stderr.strip() == f"trainvitals: config file {missing} does not exist"
    p = tv_run(tv, "run", "--out", tmp_path / "r", "--", "true",
               env={"TRAINVITALS_CONFIG": str(missing)})
    assert p.stderr.strip() == f"trainvitals: config file {missing} does not exist"


def test_summary_shows_the_command_with_its_quoting(run_tv):
    r = run_tv(["python3", "-c", "print('hi')"])
    assert r.proc.returncode == 0, r.proc.stderr
    assert "trainvitals: python3 -c \"print('hi')\" — exit code 0" in r.proc.stderr


def test_latest_links_the_newest_run_and_export_takes_it(tv, tmp_path):
    first = tv_run(tv, "run", "--name", "one", "--", "true", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    runs = tmp_path / "trainvitals-runs"
    time.sleep(1.1)  # a new second: a new directory name
    second = tv_run(tv, "run", "--name", "two", "--", "sleep", "1.2", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    latest = runs / "latest"
    assert latest.is_symlink() and not os.path.isabs(os.readlink(latest))
    assert os.readlink(latest).endswith("-two")
    rows = read_jsonl(latest / "samples.jsonl")
    csv = tv_run(tv, "export", "latest", cwd=tmp_path)
    assert csv.returncode == 0, csv.stderr
    assert len(csv.stdout.splitlines()) == 1 + len(rows)
    by_path = tv_run(tv, "export", "trainvitals-runs/latest", cwd=tmp_path)
    assert by_path.stdout == csv.stdout
    # A run that never started leaves the link alone.
    gone = tv_run(tv, "run", "--name", "three", "--", "no-such-command-xyz", cwd=tmp_path)
    assert gone.returncode == 127
    assert os.readlink(latest).endswith("-two")
    missing = tv_run(tv, "export", "nothing-here", cwd=tmp_path)
    assert missing.returncode == 2 and "no such run directory" in missing.stderr


def wait_for_sockets(tmp, n, seconds=20):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and len(list(tmp.glob("trainvitals-*/markers.sock"))) < n:
        time.sleep(0.05)
    return list(tmp.glob("trainvitals-*"))


@pytest.fixture
def short_tmpdir():
    """A TMPDIR short enough for the user's own directory in it (a socket's
    path is at most 107 bytes; pytest's tmp_path is too long)."""
    path = pathlib.Path(tempfile.mkdtemp(prefix="tvk9-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_marker_dirs_left_by_kill_9_are_removed_at_the_next_start(tv, tmp_path, short_tmpdir):
    tmpdir = short_tmpdir
    env = {**os.environ, "TMPDIR": str(tmpdir)}
    # The user's own directory in TMPDIR holds them (a few entries to look at).
    tmp = tmpdir / f"trainvitals-{os.getuid()}"
    victim = subprocess.Popen([tv, "run", "--quiet", "--out", str(tmp_path / "killed"), "--",
                               "sleep", "30"], env=env)
    left = wait_for_sockets(tmp, 1)
    assert len(left) == 1
    # The socket comes before the job is started: wait for the job too.
    children = pathlib.Path(f"/proc/{victim.pid}/task/{victim.pid}/children")
    deadline = time.monotonic() + 20
    while not children.read_text().split() and time.monotonic() < deadline:
        time.sleep(0.05)
    child = int(children.read_text().split()[0])
    victim.kill()
    victim.wait()
    os.kill(child, signal.SIGKILL)
    assert left[0].exists()  # nobody removed it
    alive = subprocess.Popen([tv, "run", "--quiet", "--out", str(tmp_path / "alive"), "--",
                              "sleep", "4"], env=env)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not (set(tmp.glob("trainvitals-*/markers.sock"))
                                               - {left[0] / "markers.sock"}):
        time.sleep(0.05)
    mine = list(tmp.glob("trainvitals-*"))
    assert left[0] not in mine and len(mine) == 1  # removed at the start of the next run
    p = subprocess.run([tv, "run", "--quiet", "--out", str(tmp_path / "next"), "--", "true"],
                       env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert list(tmp.glob("trainvitals-*")) == mine  # a running run's directory is left alone
    alive.wait(timeout=30)
    assert list(tmp.glob("trainvitals-*")) == []
    assert list(tmpdir.iterdir()) == [tmp]


def test_notices_come_as_one_line_and_once_per_python_process(tmp_path):
    script = tmp_path / "twice.py"
    script.write_text(
        "import time, trainvitals\n"
        f"for i in range(2):\n"
        f"    with trainvitals.monitor(out=r'{tmp_path}/fit%d' % i, interval=0.2) as m:\n"
        "        for s in range(5):\n"
        "            time.sleep(0.1)\n"
        "            m.step(s)\n"
        # One script is one run: close() ends it, and the next monitor starts another.
        "    m.close()\n")
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                       env={**os.environ, **ENV,
                            "TRAINVITALS_NVML_LIBRARY": str(tmp_path / "none" / "libnvidia-ml.so.1")})
    assert p.returncode == 0, p.stderr
    said = [line for line in p.stderr.splitlines() if "nvml" in line.lower() or "NVIDIA" in line]
    assert len(said) == 1 and said[0].startswith("trainvitals: not measured: ") and "GPU (no NVIDIA driver library" in said[0], p.stderr
    for i in range(2):  # every run still records it
        events = read_jsonl(tmp_path / f"fit{i}" / "events.jsonl")
        assert any(e["type"] == "source_unavailable" and e["source"] == "nvml" for e in events)


def test_attach_to_its_own_shell_does_not_count_itself(tv, tmp_path):
    out = tmp_path / "attached"
    # The shell's children: trainvitals, then a sleep. (A background job of a
    # non-interactive shell ignores SIGINT: ended with SIGTERM.)
    shell = subprocess.run(["/bin/sh", "-c", f"'{tv}' attach --quiet --interval 0.3 --out '{out}' $$ & "
                            "tv=$!; sleep 2; kill -TERM $tv; wait $tv"],
                           capture_output=True, text=True, timeout=60)
    assert shell.returncode == 0, shell.stderr
    rows = read_jsonl(out / "samples.jsonl")
    assert len(rows) >= 3
    # The shell and its sleep, never trainvitals with its threads.
    assert max(r["job"]["processes"] for r in rows) <= 2, rows
    assert max(r["job"]["threads"] for r in rows) <= 2, rows
