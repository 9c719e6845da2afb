"""`--prometheus`: a real scrape passes promtool, and a real Prometheus server scrapes a run."""
import os
import subprocess
import sys

from prom_services import http_get, need, query, wait_for


def test_scrape_passes_promtool(prom_live):
    status, ctype, text = http_get(prom_live["url"])
    assert status == 200
    assert ctype.startswith("text/plain; version=0.0.4")
    check = subprocess.run([need("promtool"), "check", "metrics"], input=text,
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    assert 'trainvitals_job_processes{host="' in text
    assert 'run="prom-test"' in text
    assert "# EOF" not in text


def test_openmetrics_when_the_scraper_asks(prom_live):
    status, ctype, text = http_get(
        prom_live["url"], {"Accept": "application/openmetrics-text;version=1.0.0,text/plain;q=0.5"})
    assert ctype.startswith("application/openmetrics-text; version=1.0.0")
    assert text.endswith("# EOF\n")
    assert "# TYPE trainvitals_job_processes gauge" in text


def test_real_prometheus_scrapes_the_job_series(prom_live):
    def series():
        answer = query(prom_live["prom"], "trainvitals_job_processes")
        return answer["status"] == "success" and answer["data"]["result"]

    result = wait_for(series, timeout=40, what="trainvitals_job_processes in Prometheus")
    labels = result[0]["metric"]
    assert labels["run"] == "prom-test"
    assert labels["job"] == "trainvitals"
    assert labels["host"] == os.uname().nodename
    assert float(result[0]["value"][1]) >= 1


def test_port_in_use_fails_before_the_command_starts(tv, tmp_path):
    import socket
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        marker = tmp_path / "ran"
        proc = subprocess.run([tv, "run", "--out", str(tmp_path / "r"), "--prometheus", str(port),
                               "--", "touch", str(marker)], capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in proc.stderr
    assert not marker.exists()
    assert not (tmp_path / "r").exists()


def test_malformed_addresses_give_2(tv, tmp_path):
    marker = tmp_path / "ran"
    for flags in (["--prometheus", "localhost"], ["--prometheus", "1:2:3"],
                  ["--pushgateway", "gw:9091"], ["--pushgateway", "http://gw:x"],
                  ["--pushgateway-delete"]):
        proc = subprocess.run([tv, "run", "--out", str(tmp_path / "r"), *flags, "--",
                               "touch", str(marker)], capture_output=True, text=True)
        assert proc.returncode == 2, (flags, proc.stderr)
        assert flags[0] in proc.stderr, proc.stderr
    assert not marker.exists()
