"""Real Prometheus servers for the tests: a free port, start, wait until ready, stop."""
import json
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, headers=None, timeout=5):
    req = urllib.request.Request(url, headers=headers or {})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return resp.status, resp.headers.get("Content-Type", ""), resp.read().decode()


def wait_for(check, timeout=30, what="condition"):
    """Calls check() until it returns something truthy; fails after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            result = check()
            if result:
                return result
        except (OSError, urllib.error.URLError, ValueError) as e:
            last = e
        time.sleep(0.2)
    pytest.fail(f"timed out waiting for {what} (last error: {last})")


def need(binary):
    path = shutil.which(binary)
    if path is None:
        pytest.fail(f"{binary} is missing: run scripts/deps.sh")
    return path


class Service:
    """A server process started by a test, stopped with it."""

    def __init__(self, args, log_path):
        self.log = open(log_path, "w")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def start_prometheus(tmp_path, targets, rule_files=(), honor_labels=False):
    port = free_port()
    config = tmp_path / "prometheus.yml"
    target_list = ", ".join(f"'{t}'" for t in targets)
    rules = "".join(f"  - '{r}'\n" for r in rule_files)
    config.write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        + (f"rule_files:\n{rules}" if rules else "")
        + "scrape_configs:\n  - job_name: trainvitals\n"
        + ("    honor_labels: true\n" if honor_labels else "")
        + f"    static_configs:\n      - targets: [{target_list}]\n")
    svc = Service([need("prometheus"), f"--config.file={config}",
                   f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                   f"--web.listen-address=127.0.0.1:{port}"], tmp_path / "prometheus.log")
    svc.url = f"http://127.0.0.1:{port}"
    wait_for(lambda: http_get(svc.url + "/-/ready")[0] == 200, what="prometheus to be ready")
    return svc


def start_pushgateway(tmp_path):
    port = free_port()
    svc = Service([need("prometheus-pushgateway"), f"--web.listen-address=127.0.0.1:{port}"],
                  tmp_path / "pushgateway.log")
    svc.url = f"http://127.0.0.1:{port}"
    wait_for(lambda: http_get(svc.url + "/-/ready")[0] == 200, what="pushgateway to be ready")
    return svc


def query(prom_url, expr):
    """Runs an instant PromQL query; returns the decoded API answer."""
    url = prom_url + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    try:
        return json.loads(http_get(url)[2])
    except urllib.error.HTTPError as e:
        return json.loads(e.read().decode())
