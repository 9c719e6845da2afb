"""The run directory follows DESIGN.md's contract; the printed summary matches summary.json."""
import fcntl
import json
import os
import pty
import re
import struct
import subprocess
import sys
import termios

import pytest

from conftest import helper, read_jsonl

ROW_KEYS = {"t", "elapsed_s", "host", "job", "gpus"}
HOST_KEYS = {"cpu_util_ratio", "memory_used_bytes", "memory_total_bytes"}
JOB_KEYS = {"processes", "cpu_cores", "rss_bytes", "rss_bytes_max", "memory_bytes", "memory_bytes_max"}


def test_run_directory_has_the_contract_files_and_keys(run_tv):
    r = run_tv([*helper("burn.py"), "2"], "--interval", "0.5")
    assert r.proc.returncode == 0, r.proc.stderr
    for name in ("meta.json", "samples.jsonl", "events.jsonl", "summary.json"):
        assert (r.out / name).exists(), name
    meta = r.meta
    for key in ("schema_version", "command", "host", "start_t", "interval_s", "sample_hz", "gpus",
                "trainvitals_version"):
        assert key in meta, key
    assert meta["interval_s"] == 0.5
    rows = r.rows
    assert len(rows) >= 5
    full = rows[2]
    assert ROW_KEYS <= full.keys()
    assert HOST_KEYS <= full["host"].keys(), full["host"].keys()
    assert JOB_KEYS <= full["job"].keys(), full["job"].keys()
    ts = [row["t"] for row in rows]
    assert ts == sorted(ts)
    types = [e["type"] for e in r.events]
    assert types[0] == "start" and types[-1] == "end"
    assert "process_start" in types
    assert all("t" in e for e in r.events)
    s = r.summary
    assert s["exit_code"] == 0 and s["rows"] == len(rows)
    assert s["job"]["cpu_cores"]["max"] >= s["job"]["cpu_cores"]["mean"] > 0


def test_printed_summary_holds_the_numbers_of_summary_json(run_tv):
    r = run_tv([sys.executable, "-c", "import time; x = b'1' * (64 << 20); time.sleep(1.5)"])
    s = r.summary
    text = r.proc.stderr
    assert f"exit code 0 after {s['duration_s']:.1f} s" in text
    cores, limit = s["job"]["cpu_cores"], s["host"]["cpu_limit_cores"]["mean"]
    share = f"{100 * cores['mean'] / limit:.0f}%"
    assert f"job mean {cores['mean']:.2f} of {limit:g} cores ({share}), max {cores['max']:.2f}" in text
    mib = s["job"]["memory_bytes"]["max"] / 2**20
    assert f"job peak {mib:.0f} MiB" in text
    assert str(r.out) in text


def test_no_status_line_when_stderr_is_not_a_terminal(run_tv):
    r = run_tv(["sleep", "1.3"])
    assert "\r" not in r.proc.stderr


def test_status_line_on_a_terminal_and_quiet_silences_everything(tv, tmp_path):
    def run_on_pty(*flags):
        pid, fd = pty.fork()
        if pid == 0:
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
            os.execve(tv, [tv, "run", "--out", str(tmp_path / f"r{len(flags)}"), *flags, "--", "sleep", "2.2"],
                      {**os.environ, "TERM": "xterm"})
        out = b""
        while True:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        os.waitpid(pid, 0)
        return out.decode(errors="replace")

    shown = run_on_pty()
    # Drawn in the bottom row (24) of the terminal (test_status_line.py has the rest).
    assert re.search(r"\x1b\[24;1H\x1b\[0mtrainvitals 1\.\d s \| CPU", shown), shown
    assert "exit code 0" in shown
    quiet = run_on_pty("--quiet")
    assert "trainvitals" not in quiet


def test_samples_stay_valid_when_trainvitals_is_killed(tv, tmp_path):
    out = tmp_path / "run"
    proc = subprocess.Popen([tv, "run", "--out", str(out), "--interval", "0.2", "--", "sleep", "30"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    import time
    time.sleep(2.1)
    proc.kill()
    proc.wait()
    subprocess.run(["pkill", "-f", "sleep 30"], check=False)
    text = (out / "samples.jsonl").read_text()
    lines = text.splitlines()
    assert len(lines) >= 5
    complete = lines if text.endswith("\n") else lines[:-1]
    for line in complete:
        json.loads(line)


def test_attach_follows_a_running_process_until_it_exits(tv, tmp_path):
    target = subprocess.Popen([*helper("burn.py"), "1.5"])
    out = tmp_path / "attached"
    proc = subprocess.run([tv, "attach", "--out", str(out), str(target.pid)],
                          capture_output=True, text=True, timeout=30)
    _, _, usage = os.wait4(target.pid, 0)
    assert proc.returncode == 0, proc.stderr
    rows = read_jsonl(out / "samples.jsonl")
    assert max(r["job"].get("processes", 0) for r in rows) == 1
    # The CPU it measured is the CPU the target used (the kernel's own account
    # of it, from wait4), whatever share of the machine the target got.
    measured = sum(r["job"].get("cpu_cores", 0) * 1.0 for r in rows)  # 1 s rows
    truth = usage.ru_utime + usage.ru_stime
    assert truth > 0.2, truth
    assert measured == pytest.approx(truth, rel=0.3, abs=0.2), (measured, truth)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["exit_code"] is None


def test_attach_to_a_missing_pid_fails_clearly(tv, tmp_path):
    proc = subprocess.run([tv, "attach", "--out", str(tmp_path / "x"), "4194000"],
                          capture_output=True, text=True)
    assert proc.returncode == 1
    assert "no process with PID 4194000" in proc.stderr
