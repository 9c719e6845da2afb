"""Shared helpers for the integration tests: they run the real CLI on real processes."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

from prom_services import free_port, http_get, start_prometheus, wait_for

ROOT = pathlib.Path(__file__).resolve().parents[2]
HELPERS = pathlib.Path(__file__).resolve().parent / "helpers"


def cli_path():
    build = os.environ.get("TRAINVITALS_BUILD", "build/release")
    path = (ROOT / build / "trainvitals").resolve()
    if not path.exists():
        pytest.fail(f"{path} is missing: run `make` first")
    return str(path)


class Run:
    """A finished `trainvitals run`: its process result and run directory."""

    def __init__(self, proc, out):
        self.proc = proc
        self.out = pathlib.Path(out)

    @property
    def rows(self):
        return read_jsonl(self.out / "samples.jsonl")

    @property
    def events(self):
        return read_jsonl(self.out / "events.jsonl")

    @property
    def meta(self):
        return json.loads((self.out / "meta.json").read_text())

    @property
    def summary(self):
        return json.loads((self.out / "summary.json").read_text())


def read_jsonl(path):
    lines = pathlib.Path(path).read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture(autouse=True, scope="session")
def private_run_history(tmp_path_factory):
    """Runs made by the tests are indexed in a run history of their own, never the user's."""
    os.environ["XDG_DATA_HOME"] = str(tmp_path_factory.mktemp("xdg-data"))
    # ... and announce themselves to `trainvitals top` in a runtime directory of their own.
    runtime = tmp_path_factory.mktemp("xdg-runtime")
    runtime.chmod(0o700)
    os.environ["XDG_RUNTIME_DIR"] = str(runtime)


@pytest.fixture
def tv():
    return cli_path()


@pytest.fixture
def run_tv(tv, tmp_path):
    """Runs `trainvitals run [flags] -- command` into a fresh run directory."""

    def run(command, *flags, timeout=120, env=None, name="run"):
        out = tmp_path / name
        args = [tv, "run", "--out", str(out), *flags, "--", *command]
        proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, **(env or {})})
        return Run(proc, out)

    return run


def helper(name):
    return [sys.executable, str(HELPERS / name)]


@pytest.fixture(scope="session")
def prom_live(tmp_path_factory):
    """A `trainvitals run --prometheus` of a sleeping command, scraped by a real Prometheus."""
    tv = cli_path()
    tmp = tmp_path_factory.mktemp("prom")
    port = free_port()
    args = [tv, "run", "--out", str(tmp / "run"), "--name", "prom-test", "--interval", "0.5",
            "--quiet", "--prometheus", f"127.0.0.1:{port}", "--",
            sys.executable, "-c", "import time; time.sleep(3600)"]  # ended at teardown
    run = subprocess.Popen(args, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/metrics"
    wait_for(lambda: "trainvitals_job_processes" in http_get(url)[2], what="a first row")
    prom = start_prometheus(tmp, [f"127.0.0.1:{port}"])
    yield {"url": url, "prom": prom.url, "run": run}
    prom.stop()
    run.terminate()
    run.wait(timeout=30)
