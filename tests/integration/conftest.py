"""Shared helpers for the integration tests: they run the real CLI on real processes."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

from prom_services import free_port, http_get, start_prometheus, wait_for


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "install: the installation tier (`pip install .`, `make demo` with only "
        "Debian on PATH): make test-install, run once by .ci/run, not by make test")
    config.addinivalue_line(
        "markers", "slow: the slowest end-to-end tier (a check already made for one framework, "
        "made again for the others): make test-slow, not make test")
    config.addinivalue_line(
        "markers", "helm: the Helm chart with the real Helm, built from its Go module "
        "(scripts/helm.sh): make test-helm, not make test")
    config.addinivalue_line(
        "markers", "fleet: three nodes as network and PID namespaces, each with its own agent, "
        "and one Prometheus (root): make test-fleet, not make test")
    config.addinivalue_line(
        "markers", "multinode: one torchrun job on two nodes made as namespaces, each under "
        "its own `trainvitals run`, judged as one job (root): make test-multinode, not make test")

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

    def run(command, *flags, timeout=120, env=None, name="run", preexec_fn=None):
        out = tmp_path / name
        args = [tv, "run", "--out", str(out), *flags, "--", *command]
        proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, **(env or {})}, preexec_fn=preexec_fn)
        return Run(proc, out)

    return run


def cpu_seconds(rows):
    """CPU seconds of the job by its rows: cores busy times each row's span."""
    total, before = 0.0, 0.0
    for row in rows:
        total += row["job"].get("cpu_cores", 0) * (row["elapsed_s"] - before)
        before = row["elapsed_s"]
    return total


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


def stop_run(run):
    """Ends a `trainvitals run` Popen and its job: TERM, which it forwards to
    the job (a SIGKILL would leave the job running without it)."""
    run.terminate()
    try:
        run.wait(timeout=60)
    except subprocess.TimeoutExpired:
        run.kill()
        run.wait()


class OtherUser:
    """An unprivileged local user, made by the test run: the hostile neighbour on a shared machine."""

    name = "tv-neighbour"

    def __init__(self):
        import pwd
        entry = pwd.getpwnam(self.name)
        self.uid, self.gid = entry.pw_uid, entry.pw_gid

    def run(self, args, **kwargs):
        """subprocess.run of `args` as this user (no supplementary groups)."""
        return subprocess.run(args, user=self.uid, group=self.gid, extra_groups=[], **kwargs)

    def popen(self, args, **kwargs):
        return subprocess.Popen(args, user=self.uid, group=self.gid, extra_groups=[], **kwargs)


@pytest.fixture(scope="session")
def other_user():
    """OtherUser, created once (useradd) when the tests run as root; skips where they do not."""
    if os.geteuid() != 0:
        pytest.skip("needs root to create an unprivileged user")
    import pwd
    try:
        pwd.getpwnam(OtherUser.name)
    except KeyError:
        made = subprocess.run(["/usr/sbin/useradd", "--system", "--no-create-home", "--shell",
                               "/usr/sbin/nologin", OtherUser.name], capture_output=True, text=True)
        if made.returncode != 0:
            try:  # made meanwhile by a test process beside this one
                pwd.getpwnam(OtherUser.name)
            except KeyError:
                pytest.skip(f"useradd {OtherUser.name} failed: {made.stderr.strip()}")
    return OtherUser()
