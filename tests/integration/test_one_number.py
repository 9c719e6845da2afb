"""One number everywhere, and a run that keeps its judges.

One short run on two fake GPUs: GPU 0 is the job's (40 % busy, 250 W), GPU 1
is busy (90 %, 400 W) with another job's work, so a view that averages or adds
up every GPU shows another number than the run. The report's header, summary.json,
the summary printed at the end, `compare --json`, `runs --json` and the
Prometheus endpoint's run-level series at the run's last row must agree on GPU
busy, GPU energy, cost and health.

The run is made with a config whose [findings] thresholds open low-gpu-util,
which the defaults would not open in seconds: `analyze` without the config
reaches the run's own verdict, and with another config says what changed."""
import html
import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import threading
from html.parser import HTMLParser

import pytest

from conftest import ROOT, cli_path
from prom_services import free_port, http_get, wait_for

FAKE = ROOT / "build" / "release" / "tests" / "fake_nvml" / "fake_nvml" / "libnvidia-ml.so.1"
SCENARIO = ROOT / "tests" / "fake_nvml" / "scenarios" / "cost.json"
ENV = {"TRAINVITALS_NVML_LIBRARY": str(FAKE), "FAKE_NVML_SCENARIO": str(SCENARIO),
       "PYTHONPATH": str(ROOT / "python")}

# Two epochs of steps; in the last one it says so (the test scrapes then) and
# goes on stepping until the test has scraped.
LOOP = textwrap.dedent("""
    import os, sys, time, trainvitals
    here = os.path.dirname(os.path.abspath(sys.argv[0]))
    with trainvitals.monitor() as m:
        step = 0
        for epoch in range(2):
            m.epoch(epoch)
            for _ in range(15):
                time.sleep(0.1)
                m.step(step); step += 1
        open(os.path.join(here, "near-the-end"), "w").close()
        deadline = time.time() + 20
        while not os.path.exists(os.path.join(here, "scraped")) and time.time() < deadline:
            time.sleep(0.1)
            m.step(step); step += 1
""")

# low-gpu-util opens within seconds at these thresholds (defaults: a 300 s
# window after a 30 s warm-up); money needs prices.
CONFIG = textwrap.dedent("""
    [findings]
    warmup_s = 0
    open_s = 1
    window_s = 2
    low_gpu_util_ratio = 0.5
    low_gpu_util_red_ratio = 0.45
    low_gpu_util_window_s = 2

    [cost]
    pue = 1.2
    kwh_price = 0.30
    currency = "EUR"
    gpu_hour_price = { h100 = 2.5, default = 1.0 }
""")


def tv(*args, env=None):
    clean = {k: v for k, v in os.environ.items() if k != "TRAINVITALS_CONFIG"}
    return subprocess.run([cli_path(), *map(str, args)], capture_output=True, text=True,
                          timeout=60, env={**clean, **(env or {})})


def prom_value(text, name, **labels):
    for line in text.splitlines():
        if not line.startswith(name + "{"):
            continue
        if all(f'{k}="{v}"' in line for k, v in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    return None


def scrape_to_the_end(port, ended, out):
    """Scrapes /metrics over one kept-alive connection until the run has ended
    and its endpoint is gone; out["last"] is the last answer. The run's last
    row is published before summary.json is written and the endpoint closes
    only after it, so the last answer is the run's last row."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    while True:
        try:
            conn.request("GET", "/metrics")
            resp = conn.getresponse()
            body = resp.read().decode()
            if resp.status == 200 and body:
                out["last"] = body
        except (OSError, http.client.HTTPException):
            conn.close()
            if ended.is_set():
                return
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("one")
    (tmp / "loop.py").write_text(LOOP)
    (tmp / "config.toml").write_text(CONFIG)
    port = free_port()
    db = tmp / "runs.db"
    args = [cli_path(), "run", "--out", str(tmp / "run"), "--interval", "0.5", "--db", str(db),
            "--config", str(tmp / "config.toml"), "--prometheus", str(port), "--",
            sys.executable, str(tmp / "loop.py")]
    clean = {k: v for k, v in os.environ.items() if k != "TRAINVITALS_CONFIG"}
    proc = subprocess.Popen(args, env={**clean, **ENV}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    ended, final = threading.Event(), {}
    poller = threading.Thread(target=scrape_to_the_end, args=(port, ended, final))
    try:
        wait_for(lambda: (tmp / "near-the-end").exists(), what="the last steps")
        scrape = http_get(f"http://127.0.0.1:{port}/metrics")[2]
        poller.start()
        (tmp / "scraped").touch()
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        ended.set()
        if poller.is_alive():
            poller.join(timeout=10)
    assert proc.returncode == 0, err
    return {"dir": tmp / "run", "tmp": tmp, "db": db, "stderr": err, "scrape": scrape,
            "final_scrape": final.get("last"),
            "summary": json.loads((tmp / "run" / "summary.json").read_text()),
            "meta": json.loads((tmp / "run" / "meta.json").read_text())}


class Headline(HTMLParser):
    """The report's header table: {row title: cell text} of its first column."""

    def __init__(self):
        super().__init__()
        self.rows, self._in, self._cell, self._key, self._text = {}, False, None, None, ""

    def handle_starttag(self, tag, attrs):
        if tag == "table" and ("class", "headline") in attrs:
            self._in = True
        elif self._in and tag in ("th", "td"):
            self._cell, self._text = tag, ""

    def handle_endtag(self, tag):
        if not self._in:
            return
        if tag == "table":
            self._in = False
        elif tag == "th" and self._cell == "th":
            self._key, self._cell = self._text, None
        elif tag == "td" and self._cell == "td":
            if self._key is not None and self._key not in self.rows:
                self.rows[self._key] = self._text
            self._cell = None

    def handle_data(self, data):
        if self._cell:
            self._text += data


def report_header(run_dir, *extra):
    p = tv("report", run_dir, "-o", run_dir / "page.html", *extra)
    assert p.returncode == 0, p.stderr
    parser = Headline()
    page = (run_dir / "page.html").read_text()
    parser.feed(page)
    return parser.rows, page, p.stderr


def summary_lines(stderr):
    """The summary printed at the end: its Cost and Health lines."""
    return [l.strip() for l in stderr.splitlines() if l.startswith(("  Cost", "  Health"))]


def test_every_view_shows_the_runs_own_gpu_busy_energy_cost_and_health(run):
    s, cost = run["summary"], run["summary"]["cost"]
    # The scenario: only GPU 0 is the job's, and the two GPUs differ, so a view
    # over every GPU would show another number.
    assert cost["gpus_used"] == 1 and len(s["gpus"]) == 2
    busy, gpu_kwh, kwh, money = (cost["busy_ratio"], cost["gpu_energy_kwh"], cost["energy_kwh"],
                                 cost["money"])
    health = s["health"]["score"]
    every_gpu = sum(g["util_ratio"]["mean"] for g in s["gpus"]) / 2
    assert abs(every_gpu - busy) > 0.1, (every_gpu, busy)
    all_joules = sum(g["energy_joules"] for g in s["gpus"])
    assert abs(all_joules / 3.6e6 - gpu_kwh) > 0.1 * gpu_kwh

    # The summary printed at the end, and the report's header, as the same text.
    printed = summary_lines(run["stderr"])
    busy_text = f"{round(busy * 100)}%"
    [held] = [l for l in printed if "GPU held" in l]
    assert f"({busy_text})" in held, printed
    [energy] = [l for l in printed if " Wh" in l or " kWh" in l]
    [money_line] = [l for l in printed if "EUR" in l and "GPU-hours" in l]
    [health_line] = [l for l in printed if l.startswith("Health") and "/100" in l]
    assert int(re.search(r"(\d+)/100", health_line).group(1)) == round(health)

    header, _, _ = report_header(run["dir"])
    assert header["GPU busy"].startswith(busy_text + " of 1 GPU"), header
    gpu_energy_text = re.search(r"GPUs ([\d.]+ k?Wh)", energy).group(1)
    assert header["GPU energy"] == gpu_energy_text, (header, energy)
    assert energy.split()[1] + " " + energy.split()[2] == header["Energy"], (header, energy)
    assert money_line.split()[1] + " " + money_line.split()[2] == header["Cost"], header
    assert header["Health"] == f"{round(health)} / 100", header

    # compare --json (the run against itself) and runs --json: the summary's numbers.
    p = tv("compare", "--json", run["dir"], run["dir"])
    assert p.returncode == 0, p.stderr
    figures = {f["key"]: f["values"] for f in json.loads(p.stdout)["figures"]}
    assert figures["gpu_busy_ratio"] == [busy, busy]
    assert figures["energy_kwh"] == [kwh, kwh]
    assert figures["gpu_energy_kwh"] == [gpu_kwh, gpu_kwh]
    assert figures["money"] == [money, money]
    assert figures["health"] == [health, health]
    p = tv("runs", "--db", run["db"], "--json", "--limit", "0")
    assert p.returncode == 0, p.stderr
    [r] = json.loads(p.stdout)["runs"]
    assert (r["busy_ratio"], r["energy_kwh"], r["money"], r["currency"]) == (busy, kwh, money, "EUR")
    assert r["gpu_energy_kwh"] == gpu_kwh
    assert r["gpu_util_ratio_mean"] == pytest.approx(busy, abs=5e-5)  # the job's GPU only
    assert r["health_score"] == health and r["gpu_count"] == 1

    # Prometheus in the last steps: the per-GPU series of the job's GPU at the
    # run's busy share (a constant load), and the run-level series over the
    # job's GPU only (its energy is GPU 0's counter, not GPU 0's and GPU 1's).
    scrape = run["scrape"]
    assert prom_value(scrape, "trainvitals_gpu_util_ratio", gpu="0") == pytest.approx(busy)
    assert prom_value(scrape, "trainvitals_run_gpus_used") == 1
    assert prom_value(scrape, "trainvitals_run_gpu_energy_joules_total") == \
        prom_value(scrape, "trainvitals_gpu_energy_joules_total", gpu="0")
    assert prom_value(scrape, "trainvitals_run_cost_total", currency="EUR") is not None, scrape

    # Prometheus at the run's last row: summary.json's own figures, computed by
    # the same code, within the rounding summary.json writes them with (busy to
    # 4 decimals, kWh and money to 6 significant digits). The money's GPU-hours
    # run to the last row, the summary's to the run's end a few ms later: at
    # most 2.5 EUR an hour for 50 ms.
    final = run["final_scrape"]
    assert final is not None
    assert prom_value(final, "trainvitals_run_gpus_used") == cost["gpus_used"]
    assert prom_value(final, "trainvitals_run_gpu_busy_ratio") == pytest.approx(busy, abs=5e-5)
    joules = prom_value(final, "trainvitals_run_gpu_energy_joules_total")
    assert joules / 3.6e6 == pytest.approx(gpu_kwh, rel=1e-5), (joules, gpu_kwh)
    cost_so_far = prom_value(final, "trainvitals_run_cost_total", currency="EUR")
    assert cost_so_far == pytest.approx(money, rel=1e-5, abs=2.5 * 0.05 / 3600), \
        (cost_so_far, money)
    assert prom_value(final, "trainvitals_run_cost_total", currency="USD") is None
    # The health so far: the end may still judge (markers held back a moment,
    # how the job ended), so near, not equal.
    so_far = prom_value(final, "trainvitals_health_score")
    assert so_far is not None and abs(so_far - health) <= 5, (so_far, health)
    # Goodput at the last row counts every row, those whose phase marks were
    # still to come among them: the summary's, within its four places.
    goodput = prom_value(final, "trainvitals_goodput_ratio")
    assert goodput == pytest.approx(s["health"]["goodput"]["productive_ratio"], abs=1e-4), \
        (goodput, s["health"]["goodput"])


def test_meta_json_keeps_the_thresholds_rules_and_rates_the_run_was_judged_with(run):
    meta = run["meta"]
    assert meta["thresholds"]["low_gpu_util_ratio"] == 0.5
    assert meta["thresholds"]["warmup_s"] == 0
    assert meta["thresholds"]["input_bound_ratio"] == 0.1  # a default, recorded too
    assert meta["cost_rates"] == {"pue": 1.2, "grid_g_per_kwh": 475, "kwh_price": 0.3,
                                  "currency": "EUR",
                                  "gpu_hour_price": {"default": 1.0, "h100": 2.5}}
    assert {r["name"] for r in meta["alert_rules"]} >= {"gpu-low-util"}


def test_analyze_reaches_the_live_verdict_without_the_config(run):
    s = run["summary"]
    assert "low-gpu-util" in [f["id"] for f in s["findings"]]  # opened by the config's thresholds
    p = tv("analyze", "--json", run["dir"])
    assert p.returncode == 0, p.stderr
    v = json.loads(p.stdout)
    assert v["thresholds"] == {"source": "run"}
    assert v["health"]["score"] == s["health"]["score"]
    key = lambda f: (f["id"], f["severity"], json.dumps(f["subject"]), f["opened_t"])
    assert sorted(map(key, v["findings"])) == sorted(map(key, s["findings"]))
    text = tv("analyze", run["dir"])
    assert text.returncode == 0 and "judged with" not in text.stderr, text.stderr
    assert "low-gpu-util [warning]" in text.stdout


def test_analyze_and_report_with_another_config_say_what_changed(run):
    other = run["tmp"] / "other.toml"
    other.write_text("[findings]\nlow_gpu_util_ratio = 0.3\n")
    p = tv("analyze", run["dir"], "--config", other)
    assert p.returncode == 0, p.stderr
    line = (f"trainvitals: judged with --config {other}: warmup_s 30 (the run used 0), "
            "window_s 60 (the run used 2), open_s 30 (the run used 1), "
            "low_gpu_util_ratio 0.3 (the run used 0.5), ")
    assert line in p.stderr, p.stderr
    assert "low-gpu-util [" not in p.stdout  # the defaults' long window: not opened
    v = json.loads(tv("analyze", "--json", run["dir"], "--config", other).stdout)
    assert v["thresholds"]["source"] == "config"
    assert {"key": "low_gpu_util_ratio", "value": 0.3, "run_value": 0.5} in \
        v["thresholds"]["changed"]
    assert v["findings"] == []
    header, page, stderr = report_header(run["dir"], "--config", other)
    assert "low_gpu_util_ratio 0.3 (the run used 0.5)" in stderr
    assert "low_gpu_util_ratio 0.3 (the run used 0.5)" in html.unescape(page)
    assert header["Health"] == f"{round(v['health']['score'])} / 100"
    assert 'id="findings"' not in page  # the run's finding is not this config's


def test_a_run_written_before_runs_kept_their_judges_is_judged_as_before(run, tmp_path):
    old = tmp_path / "old"
    shutil.copytree(run["dir"], old)
    meta = {k: v for k, v in run["meta"].items()
            if k not in ("thresholds", "alert_rules", "cost_rates")}
    (old / "meta.json").write_text(json.dumps(meta))
    p = tv("analyze", "--json", old)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["findings"] == []  # the defaults, as analyze judged it before
    p = tv("analyze", "--json", old, env={"TRAINVITALS_CONFIG": str(run["tmp"] / "config.toml")})
    assert "low-gpu-util" in [f["id"] for f in json.loads(p.stdout)["findings"]]


@pytest.mark.parametrize("key,value,why", [
    ("thresholds", {"input_bound_ratio": "high"}, "key thresholds.input_bound_ratio"),
    ("thresholds", {"window_s": -1}, "key thresholds.window_s: expected a number >= 0, got -1"),
    ("cost_rates", {"pue": 9}, "key cost_rates.pue: expected a number from 1 to 5, got 9"),
])
def test_a_bad_judge_in_meta_json_is_a_clear_error(run, tmp_path, key, value, why):
    bad = tmp_path / "bad"
    shutil.copytree(run["dir"], bad)
    meta = dict(run["meta"])
    meta[key] = {**meta[key], **value}
    (bad / "meta.json").write_text(json.dumps(meta))
    for command in ("analyze", "report"):
        p = tv(command, bad)
        assert p.returncode == 2, (command, p.stderr)
        assert f"{bad / 'meta.json'}: {why}" in p.stderr, (command, p.stderr)
