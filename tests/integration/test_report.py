"""`trainvitals report` and `run --report` opened in a real headless Chromium:
the page draws every chart with data, logs no error, makes no network request,
and holds one epoch row per epoch of the summary; --compare shows both runs."""
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, cli_path

FAKE = ROOT / "build" / "release" / "tests" / "fake_nvml" / "fake_nvml" / "libnvidia-ml.so.1"
SCENARIO = ROOT / "tests" / "fake_nvml" / "scenarios" / "two_gpus.json"
EXAMPLE = ROOT / "examples" / "torch_monitor.py"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"

# Every chart the two fake GPUs, the host, the job and the markers fill.
CHARTS = ["gpu_busy", "gpu_memory", "cpu", "memory", "power", "training"]


def torch_run(out, *flags, epochs=3, gpus=True, steps=300):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python")}
    if gpus:
        env.update(TRAINVITALS_NVML_LIBRARY=str(FAKE), FAKE_NVML_SCENARIO=str(SCENARIO))
    args = [cli_path(), "run", "--out", str(out), "--interval", "0.25", *flags, "--",
            sys.executable, str(EXAMPLE), "--epochs", str(epochs), "--steps", str(steps),
            "--batch-size", "256"]
    return subprocess.run(args, capture_output=True, text=True, timeout=120, env=env)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A real run with --report on two fake GPUs (the idle GPU 1 fires an alert),
    and a second run without GPUs to compare with."""
    tmp = tmp_path_factory.mktemp("report")
    rules = tmp / "alerts.toml"
    rules.write_text('[[alert]]\nname = "gpu-asleep"\nexpr = "gpus[].util_ratio < 5%"\nall_gpus = true\n')
    a = torch_run(tmp / "a", "--report", "--alerts", str(rules))
    assert a.returncode == 0, a.stderr
    # Long enough to span several rows however fast the machine steps.
    b = torch_run(tmp / "b", epochs=2, gpus=False, steps=3000)
    assert b.returncode == 0, b.stderr
    return {"a": tmp / "a", "b": tmp / "b", "a_stderr": a.stderr}


@pytest.fixture(scope="module")
def browser():
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1280,2400"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    yield driver
    driver.quit()


def open_page(browser, path, shot):
    """Opens `path` from file:// and returns what the page drew; saves a screenshot."""
    browser.get_log("performance")  # drop what earlier pages logged
    browser.get(pathlib.Path(path).resolve().as_uri())
    charts = browser.execute_script(
        "return (window.tvCharts || []).map(c => ({id: c.id, points: c.points, series: c.series,"
        " canvas: document.querySelectorAll('#chart-' + c.id + ' canvas').length}))")
    browser.save_screenshot(str(shot))
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    requests = []
    for entry in browser.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            requests.append(message["params"]["request"]["url"])
    resources = browser.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)")
    return {"charts": charts, "errors": errors, "requests": requests, "resources": resources}


def test_run_report_draws_every_chart_without_errors_or_requests(runs, browser, tmp_path):
    page = runs["a"] / "report.html"
    assert page.exists()
    assert f"trainvitals: report {page}" in runs["a_stderr"]
    size = page.stat().st_size
    assert size < 400_000, size
    seen = open_page(browser, page, tmp_path / "report.png")
    assert seen["errors"] == []
    assert seen["resources"] == []
    assert seen["requests"] in ([], [page.resolve().as_uri()]), seen["requests"]
    charts = {c["id"]: c for c in seen["charts"]}
    assert sorted(charts) == sorted(CHARTS)
    assert len(browser.find_elements("css selector", "canvas")) == len(CHARTS)
    summary = json.loads((runs["a"] / "summary.json").read_text())
    rows = sum(1 for line in (runs["a"] / "samples.jsonl").read_text().splitlines() if line)
    for c in charts.values():
        assert c["canvas"] == 1, c
        assert c["points"] == rows, c  # a short run is not downsampled
        assert c["series"] and all(s["points"] > 0 for s in c["series"]), c
    labels = [s["label"] for s in charts["gpu_busy"]["series"]]
    assert labels == ["GPU 0 util", "GPU 1 util"], labels
    assert "GPU 0 energy" in [s["label"] for s in charts["power"]["series"]]
    epochs = browser.find_elements("css selector", "#epochs tbody tr")
    assert len(epochs) == len(summary["epochs"]) == 3
    assert browser.find_elements("css selector", "#phases tbody tr")
    alerts = browser.find_elements("css selector", "#alerts tbody tr")
    assert [r.text.split()[0] for r in alerts] == ["gpu-asleep"]  # GPU 1, never busy
    header = browser.find_element("css selector", "table.headline").text
    assert "torch_monitor.py" in header and "2 × " in header
    # The cost the run wrote into its summary, as it wrote it.
    cost = {r.find_elements("css selector", "td")[0].text: r.find_elements("css selector", "td")[1].text
            for r in browser.find_elements("css selector", "#cost tbody tr")}
    assert cost["GPUs used"] == str(summary["cost"]["gpus_used"]), cost
    assert "GPU hours held" in cost and "Energy" in cost, cost
    # The cursor on one chart names what it lies in under every chart (linked cursors).
    from selenium.webdriver.common.action_chains import ActionChains
    over = browser.find_element("css selector", "#chart-cpu .u-over")
    ActionChains(browser).move_to_element(over).perform()
    readouts = [e.text for e in browser.find_elements("css selector", ".chart .marks")]
    assert len(readouts) == len(CHARTS)
    assert all("alert gpu-asleep (GPU 1)" in r for r in readouts), readouts


def test_the_page_follows_dark_mode_and_prints_on_a4(runs, browser, tmp_path):
    page = runs["a"] / "report.html"
    background = "return getComputedStyle(document.documentElement).backgroundColor"
    try:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {
            "features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        seen = open_page(browser, page, tmp_path / "dark.png")
        assert seen["errors"] == [] and len(seen["charts"]) == len(CHARTS)
        assert browser.execute_script(background) == "rgb(20, 23, 29)"
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
        assert browser.execute_script(background) == "rgb(255, 255, 255)"
        hint = "return getComputedStyle(document.querySelector('.hint')).display"
        assert browser.execute_script(hint) == "none"
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "", "features": []})
    assert "@page { size: A4" in page.read_text()


def test_compare_overlays_the_second_run(runs, browser, tmp_path):
    out = tmp_path / "compare.html"
    proc = subprocess.run([cli_path(), "report", str(runs["a"]), "--compare", str(runs["b"]),
                           "-o", str(out)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(out)
    seen = open_page(browser, out, tmp_path / "compare.png")
    assert seen["errors"] == []
    assert seen["resources"] == []
    charts = {c["id"]: c for c in seen["charts"]}
    assert sorted(charts) == sorted(CHARTS)
    # Both runs' host and training series on the same charts; B has no GPUs.
    for chart in ("cpu", "memory", "training"):
        labels = [s["label"] for s in charts[chart]["series"]]
        assert any(l.startswith("A ") for l in labels) and any(l.startswith("B ") for l in labels)
        assert all(s["points"] > 0 for s in charts[chart]["series"]), charts[chart]
    head = browser.find_element("css selector", "table.headline thead").text
    assert "A: a" in head and "B: b" in head
    assert len(browser.find_elements("css selector", "#a-epochs tbody tr")) == 3
    assert len(browser.find_elements("css selector", "#b-epochs tbody tr")) == 2


def test_latest_names_the_newest_run(runs, tmp_path):
    (tmp_path / "trainvitals-runs").mkdir()
    (tmp_path / "trainvitals-runs" / "latest").symlink_to(runs["b"])
    proc = subprocess.run([cli_path(), "report", "latest", "-o", "b.html"], capture_output=True,
                          text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "b.html"
    assert "torch_monitor.py --epochs 2" in (tmp_path / "b.html").read_text()


def test_report_of_a_missing_run_is_a_clear_error(tmp_path):
    proc = subprocess.run([cli_path(), "report", str(tmp_path / "nope")], capture_output=True,
                          text=True, timeout=30)
    assert proc.returncode == 2
    assert "nope" in proc.stderr


def test_a_report_that_cannot_be_written_leaves_the_run_exit_code(tmp_path):
    # report.html is a directory: the page cannot replace it.
    out = tmp_path / "run"
    out.mkdir()
    (out / "report.html").mkdir()
    env = {**os.environ}
    args = [cli_path(), "run", "--out", str(out), "--report", "--", sys.executable, "-c",
            "import sys; sys.exit(3)"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 3, proc.stderr
    lines = [l for l in proc.stderr.splitlines() if "no report" in l]
    assert len(lines) == 1 and "report.html" in lines[0], proc.stderr


def test_a_job_page_draws_every_node_on_the_same_charts(browser, tmp_path):
    from test_analyze_joined import ROWS, write_node
    a = write_node(tmp_path, "job42/node-a", "gpu-a", "42", {0: 0.02, 1: 0.03})
    b = write_node(tmp_path, "job42/node-b", "gpu-b", "42", {2: 0.02, 3: 0.58}, clock_s=9)
    page = tmp_path / "job.html"
    proc = subprocess.run([cli_path(), "report", str(a), str(b), "-o", str(page)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    seen = open_page(browser, page, tmp_path / "job.png")
    assert seen["errors"] == []
    assert seen["resources"] == []
    charts = {c["id"]: c for c in seen["charts"]}
    assert sorted(charts) == ["training"]
    # The nodes' clocks lined up: their rows share one time axis.
    assert charts["training"]["points"] == ROWS
    labels = [s["label"] for s in charts["training"]["series"]]
    assert "gpu-a rank 0 steps/s" in labels and "gpu-b rank 3 data wait" in labels, labels
    header = browser.find_element("css selector", "table.headline thead").text
    assert "gpu-a" in header and "gpu-b" in header
    rows = [r.text for r in browser.find_elements("css selector", "#findings tbody tr")]
    assert any("straggler" in r and "node gpu-b" in r for r in rows), rows
