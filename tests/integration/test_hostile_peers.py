"""Hostile local peers on a shared machine: connections that idle or stall cannot blind
`run --prometheus`, and process names made of terminal controls or spreadsheet formulas
reach /metrics, the CSV export and the terminal visible and harmless."""
import csv
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from prom_services import free_port, http_get, need, wait_for
from test_gpus import FAKE


def test_scrapes_are_answered_beside_300_idle_and_stalled_connections(tv, tmp_path):
    port = free_port()
    url = f"http://127.0.0.1:{port}/metrics"
    run = subprocess.Popen(
        [tv, "run", "--out", str(tmp_path / "run"), "--quiet", "--interval", "0.2",
         "--prometheus", f"127.0.0.1:{port}", "--",
         sys.executable, "-c", "import time; time.sleep(30)"],
        stderr=subprocess.PIPE, text=True)
    crowd = []
    try:
        wait_for(lambda: "trainvitals_job_processes" in http_get(url)[2], what="a first row")
        for _ in range(300):  # connect and say nothing
            crowd.append(socket.create_connection(("127.0.0.1", port)))
        for _ in range(4):  # one request line, then nothing
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(b"GET /metrics HTTP/1.1\r\n")
            crowd.append(s)
        answered, failures = 0, []
        stop = time.monotonic() + 3
        while time.monotonic() < stop:
            try:
                status, _, body = http_get(url, timeout=1)
                if status == 200 and "trainvitals_job_processes" in body:
                    answered += 1
                else:
                    failures.append((status, body[-200:]))
            except OSError as e:  # refused, cut, or not answered within 1 s
                failures.append(repr(e))
            time.sleep(0.1)
        assert failures == []
        assert answered >= 10
    finally:
        for s in crowd:
            s.close()
        run.terminate()
        _, stderr = run.communicate(timeout=60)
    assert "failed" not in stderr, stderr


def neighbour_popen(other_user_or_none):
    return other_user_or_none.popen if other_user_or_none else subprocess.Popen


# Kernel process names (at most 15 bytes) are the basename of what was executed:
# links to `sleep` with these names give processes with these names.
JOB_NAME = b'\x1b[31m\x07\n"\\x'
OTHER_NAME = b"=cmd|\x1b[2J\x07"
CUT_NAME = "cut-in-the-mid\u00e9".encode()  # 16 bytes: the kernel keeps 15, half an "é"


def visible(name):
    """What trainvitals shows for `name` (docs/metrics.md): Control Pictures for C0 bytes."""
    return "".join(chr(0x2400 + b) if b < 0x20 else chr(b) for b in name)


def test_hostile_process_names_reach_metrics_and_csv_harmless(tv, tmp_path, request):
    other_user = None
    if os.geteuid() == 0:
        other_user = request.getfixturevalue("other_user")
    links = tempfile.mkdtemp(prefix="tv-hostile-")  # readable by the neighbour
    os.chmod(links, 0o755)
    sleep = need("sleep").encode()
    job_link = os.path.join(links.encode(), JOB_NAME)
    other_link = os.path.join(links.encode(), OTHER_NAME)
    os.symlink(sleep, job_link)
    os.symlink(sleep, other_link)
    cut_link = os.path.join(links.encode(), CUT_NAME)
    os.symlink(sleep, cut_link)
    other = neighbour_popen(other_user)([other_link, "60"])
    cut = subprocess.Popen([cut_link, "60"])
    port = free_port()
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"devices": [{"uuid": "GPU-hostile", "processes": [
        {"pid": "job", "memory_bytes": 4e9}, {"pid": "${OTHER_PID}", "memory_bytes": 1e9},
        {"pid": "${CUT_PID}", "memory_bytes": 2e9}]}]}))
    env = {**os.environ, "TRAINVITALS_NVML_LIBRARY": str(FAKE),
           "FAKE_NVML_SCENARIO": str(scenario), "OTHER_PID": str(other.pid),
           "CUT_PID": str(cut.pid)}
    out = tmp_path / "run"
    run = subprocess.Popen([tv, "run", "--out", str(out), "--interval", "0.3", "--prometheus",
                            str(port), "--", job_link, "30"],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        url = f"http://127.0.0.1:{port}/metrics"

        def all_named():
            text = http_get(url)[2]
            names = [line for line in text.splitlines()
                     if line.startswith("trainvitals_gpu_process_memory_bytes{") and "name=" in line]
            return text if len(names) == 3 else None

        text = wait_for(all_named, what="the GPU processes with their names")
        time.sleep(0.7)  # a few rows in samples.jsonl
    finally:
        run.terminate()
        stdout, stderr = run.communicate(timeout=60)
        for p in (other, cut):
            p.kill()
            p.wait()
        shutil.rmtree(links)
    raw = text.encode()
    assert not any(b < 0x20 and b != 0x0A or b == 0x7F for b in raw), text
    check = subprocess.run([need("promtool"), "check", "metrics"], input=text,
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    job_label = visible(JOB_NAME).replace("\\", "\\\\").replace('"', '\\"')
    assert f'name="{job_label}",owner="job"' in text, text
    assert f'name="{visible(OTHER_NAME)}",owner="other"' in text, text
    assert 'name="cut-in-the-mid\ufffd",owner="other"' in text, text
    # Nothing another process named reaches the terminal raw.
    assert b"\x1b" not in stderr and b"\x07" not in stderr, stderr

    exported = subprocess.run([tv, "export", str(out), "--format", "csv"], capture_output=True,
                              timeout=60)
    assert exported.returncode == 0, exported.stderr
    body = exported.stdout
    assert not any(b < 0x20 and b not in (0x0A, 0x0D) or b == 0x7F for b in body)
    rows = list(csv.reader(io.StringIO(body.decode())))
    cells = [cell for row in rows[1:] for cell in row]
    assert "'" + visible(OTHER_NAME) in cells, rows[:2]
    assert visible(JOB_NAME) in cells
    assert "cut-in-the-mid\ufffd" in cells
    assert not any(cell[:1] in ("=", "+", "@") for cell in cells)
    assert not any(cell.startswith("-") and not cell[1:2].isdigit() for cell in cells)
