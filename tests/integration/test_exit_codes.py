"""`trainvitals run` returns the command's own exit code and forwards signals."""
import os
import pathlib
import signal
import subprocess
import sys
import time

from conftest import helper


def test_exit_code_is_the_commands_own(run_tv):
    r = run_tv([sys.executable, "-c", "import sys; sys.exit(3)"])
    assert r.proc.returncode == 3
    assert r.summary["exit_code"] == 3


def test_missing_command_gives_127_with_a_shell_like_message(run_tv):
    r = run_tv(["no-such-command-xyz"])
    assert r.proc.returncode == 127
    assert "no-such-command-xyz: command not found" in r.proc.stderr


def test_child_killed_by_sigkill_gives_137(run_tv):
    r = run_tv(["sh", "-c", "kill -9 $$"])
    assert r.proc.returncode == 137
    assert r.summary["exit_signal"] == 9
    assert r.summary["exit_code"] == 137


def test_usage_errors_give_2(tv, tmp_path):
    for args in (["run", "--sample-hz", "fast", "--", "true"],
                 ["run", "--interval", "0.01", "--sample-hz", "10", "--", "true"],
                 ["run"],
                 ["frobnicate"]):
        proc = subprocess.run([tv, *args], capture_output=True, text=True, cwd=tmp_path)
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stderr.strip(), args


def test_bad_config_file_names_file_and_line(tv, tmp_path):
    cfg = tmp_path / "tv.toml"
    cfg.write_text("interval = 2\nsampel_hz = 5\n")
    proc = subprocess.run([tv, "run", "--config", str(cfg), "--", "true"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 2
    assert f"{cfg}:2: unknown key 'sampel_hz'" in proc.stderr


def test_unwritable_output_fails_before_the_child_starts(tv, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    marker = tmp_path / "ran"
    proc = subprocess.run([tv, "run", "--out", str(blocker / "run"), "--", "touch", str(marker)],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "run directory" in proc.stderr
    assert not marker.exists()


def _wait_for(path, timeout=10):
    end = time.monotonic() + timeout
    while not pathlib.Path(path).exists():
        assert time.monotonic() < end, f"{path} never appeared"
        time.sleep(0.05)


def test_int_hup_and_term_are_forwarded_to_the_child(tv, tmp_path):
    log = tmp_path / "signals.log"
    proc = subprocess.Popen([tv, "run", "--out", str(tmp_path / "run"), "--", *helper("signal_probe.py"), str(log)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_for(str(log) + ".ready")
    for sig in (signal.SIGINT, signal.SIGHUP):
        proc.send_signal(sig)
        time.sleep(0.3)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert log.read_text().split() == ["SIGINT", "SIGHUP", "SIGTERM"]
    events = [e["type"] for e in map(__import__("json").loads, (tmp_path / "run" / "events.jsonl").read_text().splitlines())]
    assert events.count("signal_forwarded") == 3


def test_child_that_dies_of_the_forwarded_signal_gives_128_plus_n(tv, tmp_path):
    proc = subprocess.Popen([tv, "run", "--out", str(tmp_path / "run"), "--", "sleep", "30"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=20)
    assert proc.returncode == 128 + signal.SIGTERM
