"""/metrics under scrape load while sampling at 100 Hz: every scrape answers, the run's
files stay whole. Part of the sanitizer runs (scripts/sanitize.sh): the server's
threads read what the sampler and sink threads write."""
import subprocess
import sys
import threading
import time

from conftest import read_jsonl
from prom_services import free_port, http_get, wait_for


def test_every_scrape_answers_while_sampling_at_100_hz(tv, tmp_path):
    port = free_port()
    out = tmp_path / "run"
    url = f"http://127.0.0.1:{port}/metrics"
    run = subprocess.Popen(
        [tv, "run", "--out", str(out), "--quiet", "--sample-hz", "100", "--interval", "0.2",
         "--prometheus", f"127.0.0.1:{port}", "--",
         sys.executable, "-c", "import time; time.sleep(8)"],
        stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: "trainvitals_job_processes" in http_get(url)[2], what="a first row")
        answered, failures = [], []
        stop = time.monotonic() + 4

        def scrape():
            while time.monotonic() < stop:
                try:
                    status, _, body = http_get(url, timeout=10)
                    if status != 200 or not body.endswith("\n") or "# EOF" in body:
                        failures.append((status, body[-200:]))
                    else:
                        answered.append(1)
                except OSError as e:  # a refused or cut connection
                    failures.append(repr(e))

        scrapers = [threading.Thread(target=scrape) for _ in range(6)]
        for t in scrapers:
            t.start()
        for t in scrapers:
            t.join()
        assert failures == []
        assert len(answered) >= 20
    finally:
        _, stderr = run.communicate(timeout=120)
    assert run.returncode == 0, stderr
    rows = read_jsonl(out / "samples.jsonl")  # every line parses
    assert len(rows) >= 10
