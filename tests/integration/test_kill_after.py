"""`run` ends a job that ignores SIGTERM: a second SIGINT or SIGTERM, or the
--kill-after grace period after the first, sends SIGKILL to its process group
and whole tree, and the run still writes its summary and says why."""
import os
import pathlib
import signal
import subprocess
import time

from conftest import Run, cli_path, read_jsonl

# Ignores SIGTERM, as does a worker that left the job's process group; both
# say they are ready by writing their PIDs.
STUBBORN = ('trap "" TERM; setsid sh -c \'trap "" TERM; echo $$ > worker.pid; '
            'while :; do sleep 0.1; done\' & echo $$ > job.pid; while :; do sleep 0.1; done')


def start(tmp_path, *flags):
    out = tmp_path / "run"
    proc = subprocess.Popen([cli_path(), "run", "--quiet", "--out", str(out), *flags, "--",
                             "sh", "-c", STUBBORN], cwd=tmp_path, stderr=subprocess.PIPE,
                            text=True)
    for _ in range(200):
        if (tmp_path / "job.pid").exists() and (tmp_path / "worker.pid").exists():
            break
        time.sleep(0.05)
    else:
        proc.kill()
        raise AssertionError("the job never started")
    return proc, out


def wait_for_event(out, kind, timeout=5):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        path = out / "events.jsonl"
        if path.exists() and any(e["type"] == kind for e in read_jsonl(path)):
            return
        time.sleep(0.05)
    raise AssertionError(f"no {kind} event")


def gone(pid):
    try:
        stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def check_killed(tmp_path, proc, out, reason):
    code = proc.wait(timeout=15)
    err = proc.stderr.read()
    assert code == 128 + signal.SIGKILL, err
    run = Run(None, out)
    assert run.summary["exit_code"] == 137
    [kill] = [e for e in run.events if e["type"] == "kill_escalated"]
    assert kill["reason"] == reason and kill["signal"] == signal.SIGKILL
    # The worker that left the group went too.
    worker = int((tmp_path / "worker.pid").read_text())
    for _ in range(100):
        if gone(worker):
            break
        time.sleep(0.05)
    assert gone(worker)
    return kill, err


def test_a_second_sigterm_kills_the_job_and_the_summary_is_written(tmp_path):
    proc, out = start(tmp_path, "--kill-after", "0")
    proc.send_signal(signal.SIGTERM)
    wait_for_event(out, "signal_forwarded")  # the first one is handled before the second
    assert proc.poll() is None  # the job ignored it
    proc.send_signal(signal.SIGTERM)
    kill, err = check_killed(tmp_path, proc, out, "second_signal")
    assert "trainvitals: a second signal: sending SIGKILL to the command's processes" in err


def test_the_grace_period_after_the_first_signal_kills_the_job(tmp_path):
    proc, out = start(tmp_path, "--kill-after", "1")
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    kill, err = check_killed(tmp_path, proc, out, "grace_period")
    assert time.monotonic() - sent >= 1
    assert kill["after_s"] >= 1
    assert ("the command still runs 1 s after the first signal (--kill-after): sending SIGKILL"
            in err), err


def test_a_job_that_ends_on_sigterm_is_not_killed(tmp_path):
    out = tmp_path / "run"
    proc = subprocess.Popen([cli_path(), "run", "--quiet", "--kill-after", "1", "--out",
                             str(out), "--", "sh", "-c", "touch ready; exec sleep 30"],
                            cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    for _ in range(200):
        if (tmp_path / "ready").exists():
            break
        time.sleep(0.05)
    time.sleep(0.1)  # past the exec
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=15) == 128 + signal.SIGTERM
    assert not [e for e in Run(None, out).events if e["type"] == "kill_escalated"]
