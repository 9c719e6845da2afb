"""`--pushgateway`: rows reach a real Pushgateway; the group is deleted only when asked."""
import os
import sys

import pytest

from prom_services import free_port, http_get, start_pushgateway, wait_for


@pytest.fixture
def gateway(tmp_path):
    svc = start_pushgateway(tmp_path)
    yield svc
    svc.stop()


def group_lines(gateway, run_name):
    text = http_get(gateway.url + "/metrics")[2]
    return [line for line in text.splitlines()
            if line.startswith("trainvitals_") and f'job="{run_name}"' in line]


def test_rows_and_the_last_one_are_pushed(run_tv, gateway):
    r = run_tv([sys.executable, "-c", "import time; time.sleep(1.5)"], "--interval", "0.5",
               "--name", "push-test", "--pushgateway", gateway.url)
    assert r.proc.returncode == 0, r.proc.stderr
    lines = group_lines(gateway, "push-test")
    host = os.uname().nodename
    processes = [line for line in lines if line.startswith("trainvitals_job_processes{")]
    assert processes, lines
    assert f'instance="{host}"' in processes[0]
    assert 'run="push-test"' in processes[0]
    assert "pushgateway" not in r.proc.stderr


def test_a_run_of_a_job_pushes_to_the_jobs_group_with_its_job_label(run_tv, gateway):
    # The gateway sets the job label to its group's: the group is the job's, one a run.
    r = run_tv([sys.executable, "-c", "import time; time.sleep(1.5)"], "--interval", "0.5",
               "--name", "push-job", "--job-id", "job/77", "--pushgateway", gateway.url)
    assert r.proc.returncode == 0, r.proc.stderr
    lines = group_lines(gateway, "job/77")
    processes = [line for line in lines if line.startswith("trainvitals_job_processes{")]
    assert processes, lines
    assert f'instance="{os.uname().nodename}"' in processes[0]
    assert 'run="push-job"' in processes[0]
    assert group_lines(gateway, "push-job") == []


def test_group_deleted_at_the_end_only_when_asked_and_the_command_succeeded(run_tv, gateway):
    r = run_tv([sys.executable, "-c", "import time; time.sleep(1)"], "--interval", "0.5",
               "--name", "push-del", "--pushgateway", gateway.url, "--pushgateway-delete")
    assert r.proc.returncode == 0, r.proc.stderr
    assert group_lines(gateway, "push-del") == []
    r = run_tv([sys.executable, "-c", "import sys, time; time.sleep(1); sys.exit(4)"],
               "--interval", "0.5", "--name", "push-fail", "--pushgateway", gateway.url,
               "--pushgateway-delete", name="failed")
    assert r.proc.returncode == 4
    assert group_lines(gateway, "push-fail")


def test_unreachable_gateway_is_said_once_and_never_stops_the_run(run_tv):
    port = free_port()
    r = run_tv([sys.executable, "-c", "import time; time.sleep(2)"], "--interval", "0.2",
               "--name", "push-none", "--pushgateway", f"http://127.0.0.1:{port}")
    assert r.proc.returncode == 0
    assert r.proc.stderr.count("pushgateway 127.0.0.1:") == 1, r.proc.stderr
    line = next(l for l in r.proc.stderr.splitlines() if "pushgateway" in l)
    # The whole reason, not httplib's bare enum name ("failed: Connection (retrying").
    assert f"cannot connect to 127.0.0.1:{port}: Connection refused" in line, line
    assert line.endswith("(retrying with backoff; monitoring goes on)"), line
    assert len(r.rows) >= 5
