"""Alert actions from real `trainvitals run`s (docs/alerts.md): a real
Alertmanager receives and then resolves the alert, a local HTTP server
receives the webhook (one that hangs or fails costs the run nothing), and a
command runs with its argv, environment and stdin, never through a shell."""
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
import time
import urllib.request

import pytest

from conftest import ROOT, cli_path
from prom_services import free_port, wait_for

FAKE = ROOT / "build" / "release" / "tests" / "fake_nvml" / "fake_nvml" / "libnvidia-ml.so.1"
IDLE_GPU = {"driver_version": "550.54.15", "devices": [
    {"uuid": "GPU-idle-0", "series": {"util_gpu": 0, "power_mw": 70000, "memory_used_bytes": 5e9},
     "processes": [{"pid": "job", "memory_bytes": 4e9, "sm_util": 0}]}]}


def fake_env(tmp_path):
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(IDLE_GPU))
    return {**os.environ, "TRAINVITALS_NVML_LIBRARY": str(FAKE), "FAKE_NVML_SCENARIO": str(path)}


def rules_file(tmp_path, extra):
    """The built-in idle-GPU rule, held 1 s, with `extra` keys (its actions)."""
    path = tmp_path / "alerts.toml"
    path.write_text('[[alert]]\nname = "gpu-low-util"\nfor = "1s"\n' + extra)
    return path


def start_run(tmp_path, rules, seconds, name="run"):
    args = [cli_path(), "run", "--out", str(tmp_path / name), "--interval", "0.5",
            "--alerts", str(rules), "--", sys.executable, "-c", f"import time; time.sleep({seconds})"]
    return subprocess.Popen(args, env=fake_env(tmp_path), stderr=subprocess.PIPE, text=True)


def read_jsonl(path):
    return [json.loads(l) for l in path.read_text().splitlines() if l.strip()]


class Recorder(http.server.BaseHTTPRequestHandler):
    """Records each POST; `mode` says how to answer: ok, hang or fail."""
    posts = []
    mode = "ok"

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        type(self).posts.append((time.time(), self.path, json.loads(body)))
        if type(self).mode == "hang":
            time.sleep(30)
        self.send_response(500 if type(self).mode == "fail" else 200)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def webhook_server():
    servers = []

    def start(mode):
        handler = type("Handler", (Recorder,), {"posts": [], "mode": mode})
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server, handler

    yield start
    for s in servers:
        s.shutdown()


def test_a_webhook_gets_the_alert_firing_and_resolved(tmp_path, webhook_server):
    server, handler = webhook_server("ok")
    url = f"http://127.0.0.1:{server.server_address[1]}/hooks/team"
    run = start_run(tmp_path, rules_file(tmp_path, f'webhook = "{url}"\n'), 4)
    _, err = run.communicate(timeout=60)
    assert run.returncode == 0, err
    states = [(p[1], p[2]["state"]) for p in handler.posts]
    assert states == [("/hooks/team", "firing"), ("/hooks/team", "resolved")], handler.posts
    firing = handler.posts[0][2]
    assert firing["name"] == "gpu-low-util" and firing["gpu"] == 0
    assert firing["severity"] == "warning" and firing["threshold"] == 0.2
    # Slack's incoming webhooks show "text" as it is.
    assert "gpu-low-util" in firing["text"] and "GPU 0" in firing["text"]
    assert not [e for e in read_jsonl(tmp_path / "run" / "events.jsonl")
                if e["type"] == "alert_action_failed"]


@pytest.mark.parametrize("mode", ["hang", "fail"])
def test_a_webhook_that_hangs_or_fails_costs_the_run_nothing(tmp_path, webhook_server, mode):
    server, handler = webhook_server(mode)
    url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    started = time.monotonic()
    run = start_run(tmp_path, rules_file(tmp_path, f'webhook = "{url}"\n'), 6)
    _, err = run.communicate(timeout=90)
    took = time.monotonic() - started
    assert run.returncode == 0, err
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["late_ticks"] == 0, summary
    rows = read_jsonl(tmp_path / "run" / "samples.jsonl")
    gaps = [b["t"] - a["t"] for a, b in zip(rows, rows[1:])]
    assert max(gaps) < 0.75, gaps  # every row on time while the webhook hangs or fails
    # The end waits a bounded grace for deliveries, not the 30 s hang.
    assert took < 6 + 15, took
    assert handler.posts, "the webhook was tried"
    failed = [e for e in read_jsonl(tmp_path / "run" / "events.jsonl")
              if e["type"] == "alert_action_failed"]
    if mode == "fail":
        assert len(handler.posts) >= 2  # retried
        assert len(failed) == 1 and failed[0]["action"] == "webhook", failed
        assert err.count("its webhook failed") == 1, err


def test_a_command_gets_argv_environment_and_stdin_without_a_shell(tmp_path):
    script = tmp_path / "on_alert.py"
    record = tmp_path / "record"
    script.write_text(
        "import json, os, sys\n"
        f"out = {str(record)!r} + '.' + os.environ['TRAINVITALS_ALERT_STATE']\n"
        "env = {k: v for k, v in os.environ.items() if k.startswith('TRAINVITALS_ALERT_')}\n"
        "json.dump({'argv': sys.argv[1:], 'env': env, 'stdin': json.loads(sys.stdin.read())},"
        " open(out, 'w'))\n"
        "print('mailed', os.environ['TRAINVITALS_ALERT_NAME'])\n")
    pwned = tmp_path / "pwned"
    argv = [sys.executable, str(script), f"$(touch {pwned})", "a b; touch " + str(pwned), "*"]
    rules = rules_file(tmp_path, f"command = {json.dumps(argv)}\n")
    run = start_run(tmp_path, rules, 4)
    _, err = run.communicate(timeout=60)
    assert run.returncode == 0, err
    firing = json.loads((tmp_path / "record.firing").read_text())
    resolved = json.loads((tmp_path / "record.resolved").read_text())
    assert firing["argv"] == argv[2:]  # each argument as written, nothing expanded
    assert not pwned.exists()
    env = firing["env"]
    assert env["TRAINVITALS_ALERT_NAME"] == "gpu-low-util"
    assert env["TRAINVITALS_ALERT_SEVERITY"] == "warning"
    assert env["TRAINVITALS_ALERT_GPU"] == "0"
    assert float(env["TRAINVITALS_ALERT_THRESHOLD"]) == 0.2
    assert env["TRAINVITALS_ALERT_RUN_DIR"] == str(tmp_path / "run")
    assert firing["stdin"]["name"] == "gpu-low-util" and firing["stdin"]["state"] == "firing"
    assert resolved["stdin"]["state"] == "resolved"
    log = (tmp_path / "run" / "alerts" / "gpu-low-util.log").read_text()
    assert log.count("mailed gpu-low-util") == 2, log


ALERTMANAGER = shutil.which("prometheus-alertmanager") or shutil.which("alertmanager")


@pytest.fixture
def alertmanager(tmp_path):
    if ALERTMANAGER is None:
        pytest.fail("prometheus-alertmanager is not installed: run scripts/deps.sh")
    port = free_port()
    config = tmp_path / "alertmanager.yml"
    config.write_text("route:\n  receiver: none\nreceivers:\n  - name: none\n")
    proc = subprocess.Popen([ALERTMANAGER, f"--config.file={config}",
                             f"--storage.path={tmp_path / 'am-data'}",
                             f"--web.listen-address=127.0.0.1:{port}",
                             "--cluster.listen-address="],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    wait_for(lambda: urllib.request.urlopen(url + "/-/ready", timeout=2).status == 200,
             what="Alertmanager ready")
    yield url
    proc.terminate()
    proc.wait(timeout=30)


def am_alerts(url):
    with urllib.request.urlopen(url + "/api/v2/alerts", timeout=5) as r:
        return json.loads(r.read())


def test_a_real_alertmanager_receives_then_resolves_the_alert(tmp_path, alertmanager):
    rules = rules_file(tmp_path, f'alertmanager = "{alertmanager}"\nlabels = {{ team = "vision" }}\n')
    run = start_run(tmp_path, rules, 8)
    try:
        alerts = wait_for(lambda: [a for a in am_alerts(alertmanager)
                                   if a["labels"].get("alertname") == "gpu-low-util"],
                          what="the alert in Alertmanager")
        [a] = alerts
        assert a["status"]["state"] == "active"
        labels = a["labels"]
        assert labels["gpu"] == "0" and labels["severity"] == "warning"
        assert labels["team"] == "vision" and labels["run"] and labels["host"]
        assert "GPU 0" in a["annotations"]["summary"]
    finally:
        _, err = run.communicate(timeout=60)
    assert run.returncode == 0, err
    # Resolved when the run ended: Alertmanager no longer lists it as firing.
    def resolved():
        left = [a for a in am_alerts(alertmanager) if a["labels"].get("alertname") == "gpu-low-util"]
        return all(a["status"]["state"] != "active" or
                   a["endsAt"] <= time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) for a in left)
    wait_for(resolved, what="the alert resolved in Alertmanager")
