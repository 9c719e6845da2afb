"""`trainvitals compare` on two real PyTorch runs: the figures are each run's
own summary figures, the changes are computed against the first, epochs are
matched by number, and a run written before costs existed is costed from its
summary as a new one is. Runs are named by their --name or script, and found
by it; each row is in one unit, money in its currency, health in points."""
import json
import os
import re
import subprocess
import sys
import time

import pytest

from conftest import ROOT, cli_path

FAKE = ROOT / "build" / "release" / "tests" / "fake_nvml" / "fake_nvml" / "libnvidia-ml.so.1"
ENV = {"TRAINVITALS_NVML_LIBRARY": str(FAKE),
       "FAKE_NVML_SCENARIO": str(ROOT / "tests" / "fake_nvml" / "scenarios" / "cost.json")}


RATES = '[cost]\ncurrency = "EUR"\ngpu_hour_price = { default = 2.0 }\n'


def train(out, steps):
    rates = out.parent / "rates.toml"
    rates.write_text(RATES)
    proc = subprocess.run([cli_path(), "run", "--quiet", "--interval", "0.5", "--out", str(out),
                           "--config", str(rates), "--name", out.name,
                           "--", sys.executable, str(ROOT / "examples" / "torch_monitor.py"),
                           "--epochs", "2", "--steps", str(steps)],
                          capture_output=True, text=True, timeout=180,
                          env={**os.environ, **ENV})
    assert proc.returncode == 0, proc.stderr
    return json.loads((out / "summary.json").read_text())


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("compare")
    return (tmp / "short", train(tmp / "short", 1500)), (tmp / "long", train(tmp / "long", 4500))


def compare(*args, cwd=None):
    return subprocess.run([cli_path(), "compare", *map(str, args)], capture_output=True,
                          text=True, timeout=60, cwd=cwd)


UNIT = re.compile(r"-?[0-9.:]+ ?([A-Za-z%-]*)")


def cells(line, widths):
    """The cells of a table line, cut at the header's column starts."""
    return [line[a:b].strip() for a, b in zip(widths, widths[1:] + [None])]


def test_figures_are_the_runs_own_and_changes_against_the_first(two_runs):
    (a_dir, a), (b_dir, b) = two_runs
    proc = compare(a_dir, b_dir, "--json")
    assert proc.returncode == 0, proc.stderr
    c = json.loads(proc.stdout)
    assert [r["label"] for r in c["runs"]] == ["short", "long"]
    figures = {f["key"]: f for f in c["figures"]}
    assert figures["duration_s"]["values"] == [a["duration_s"], b["duration_s"]]
    steps = [s["training"]["steps_per_second"]["mean"] for s in (a, b)]
    assert figures["steps_per_second"]["values"] == steps
    assert figures["steps_per_second"]["changes"][1] == round((steps[1] - steps[0]) / steps[0], 4)
    energy = [s["cost"]["energy_kwh"] for s in (a, b)]
    assert figures["energy_kwh"]["values"] == energy
    assert figures["energy_kwh"]["changes"][1] == round((energy[1] - energy[0]) / energy[0], 4)
    busy = [s["cost"]["busy_ratio"] for s in (a, b)]  # a share: the change is in points
    assert figures["gpu_busy_ratio"]["changes"][1] == round(busy[1] - busy[0], 4)
    assert [e["epoch"] for e in c["epochs"]] == [0, 1]
    assert c["epochs"][1]["duration_s"] == [a["epochs"][1]["duration_s"],
                                            b["epochs"][1]["duration_s"]]
    assert c["epochs"][0]["loss"] == [a["epochs"][0]["logs"]["loss"],
                                      b["epochs"][0]["logs"]["loss"]]
    # The longer epochs took about three times as long.
    assert figures["epoch_s"]["changes"][1] > 1
    # Money in the currency it was priced in; health changes in points.
    assert c["currency"] == "EUR"
    assert figures["money"]["currencies"] == ["EUR", "EUR"]
    assert figures["money"]["values"] == [a["cost"]["money"], b["cost"]["money"]]
    if "health" in figures:
        health = [s["health"]["score"] for s in (a, b)]
        assert figures["health"]["unit"] == "score"
        assert figures["health"]["changes"][1] == round(health[1] - health[0], 1)


def test_the_table_a_person_reads(two_runs):
    (a_dir, _), (b_dir, _) = two_runs
    proc = compare(a_dir, b_dir)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["A:", "short", "B:", "long"]
    steps = next(l for l in lines if l.startswith("steps/s "))
    assert steps.rstrip().endswith("%"), steps
    assert any(l.startswith("energy per epoch ") for l in lines)
    assert any(l.startswith("GPU energy ") for l in lines)
    assert "Epochs every run has (2), by number" in lines
    header = lines[lines.index("Epochs every run has (2), by number") + 1].split()
    assert header[:3] == ["epoch", "time", "A"]
    # Each row in one unit: one run's 0.0 GPU-s is not beside the other's 1.1 GPU-min.
    starts = [0, lines[0].index("A:"), lines[0].index("B:")]
    for line in lines[1:lines.index("Epochs every run has (2), by number")]:
        if not line.strip():
            continue
        what, *row = cells(line, starts)
        units = {UNIT.match(c).group(1) for c in row if c != "-"}
        if what in ("GPU-hours held", "GPU-hours wasted", "GPU energy", "energy",
                    "energy per epoch", "CO2e (estimate)", "peak GPU memory (job)",
                    "peak host memory (job)"):
            assert len(units) == 1, line
    money = next(l for l in lines if l.startswith("money "))
    assert cells(money, starts)[1].endswith(" EUR") and " EUR" in cells(money, starts)[2], money
    health = [l for l in lines if l.startswith("health ")]
    assert all(l.rstrip().endswith(" pts") for l in health), health


def test_a_run_from_before_costs_is_costed_from_its_summary(two_runs, tmp_path):
    (a_dir, a), (b_dir, _) = two_runs
    old = tmp_path / "old"
    old.mkdir()
    for name in ("meta.json", "samples.jsonl", "events.jsonl"):
        (old / name).write_bytes((a_dir / name).read_bytes())
    (old / "summary.json").write_text(json.dumps({k: v for k, v in a.items() if k != "cost"}))
    c = json.loads(compare(old, b_dir, "--json").stdout)
    figures = {f["key"]: f for f in c["figures"]}
    assert figures["energy_kwh"]["values"][0] == a["cost"]["energy_kwh"]
    assert figures["gpu_energy_kwh"]["values"][0] == a["cost"]["gpu_energy_kwh"]
    assert figures["gpu_hours"]["values"][0] == a["cost"]["gpu_hours"]
    # At the rates its meta.json recorded (EUR), not the defaults (no prices)
    # nor another config's: a run's money is what it cost when it ran.
    assert figures["money"]["values"][0] == a["cost"]["money"]
    assert figures["money"]["currencies"][0] == "EUR"
    other = tmp_path / "other.toml"
    other.write_text('[cost]\ncurrency = "USD"\ngpu_hour_price = { default = 9.0 }\n')
    c = json.loads(compare(old, b_dir, "--json", "--config", other).stdout)
    money = next(f for f in c["figures"] if f["key"] == "money")
    assert (money["values"][0], money["currencies"][0]) == (a["cost"]["money"], "EUR")
    # A run that recorded no rates: the config's.
    meta = json.loads((old / "meta.json").read_text())
    del meta["cost_rates"]
    (old / "meta.json").write_text(json.dumps(meta))
    c = json.loads(compare(old, b_dir, "--json", "--config", other).stdout)
    money = next(f for f in c["figures"] if f["key"] == "money")
    assert money["currencies"][0] == "USD"
    assert money["values"][0] == pytest.approx(9.0 * a["cost"]["gpu_hours"], rel=1e-5)


def test_what_cannot_be_compared_is_said(two_runs, tmp_path):
    (a_dir, _), _ = two_runs
    proc = compare(a_dir)
    assert proc.returncode == 2 and "RUN" in proc.stderr
    running = tmp_path / "running"
    running.mkdir()
    proc = compare(a_dir, running)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"trainvitals: {running}: no summary.json: the run is still "
                                  "going, or it was killed before it ended"), proc.stderr


def test_runs_are_named_and_found_by_their_name(tmp_path):
    # Two runs named with --name and one of a script, under the default runs directory.
    (tmp_path / "train.py").write_text("import time\ntime.sleep(0.3)\n")
    (tmp_path / "rates.toml").write_text(RATES)
    env = {**os.environ, **ENV}

    def run(*flags):
        proc = subprocess.run([cli_path(), "run", "--quiet", "--interval", "0.2", "--config",
                               "rates.toml", *flags, "--", sys.executable, "train.py"],
                              capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env)
        assert proc.returncode == 0, proc.stderr
        time.sleep(max(0.0, 1.05 - time.time() % 1))  # the next run starts in another second

    run("--name", "cmp-named")
    run("--name", "cmp-named")
    run()
    runs = sorted(p.name for p in (tmp_path / "trainvitals-runs").iterdir() if p.name != "latest")
    assert [r.split("-", 2)[2] for r in runs] == ["cmp-named", "cmp-named", "train"]
    # A name is its newest run; the script names a run without one.
    proc = compare("cmp-named", "train.py", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    c = json.loads(proc.stdout)
    assert [r["label"] for r in c["runs"]] == ["cmp-named", "train.py"]
    assert [os.path.basename(r["run_dir"]) for r in c["runs"]] == [runs[1], runs[2]]
    proc = compare("cmp-named", "train.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].split() == ["A:", "cmp-named", "B:", "train.py"]
    money = next(l for l in proc.stdout.splitlines() if l.startswith("money "))
    assert money.split()[1:3][1] == "EUR" and money.split()[3:5][1] == "EUR", money
    # Two runs of one name are told apart by their start time.
    proc = compare(*(f"trainvitals-runs/{r}" for r in runs[:2]), cwd=tmp_path)
    head = proc.stdout.splitlines()[0]
    assert re.fullmatch(r" +A: cmp-named \(\d\d:\d\d:\d\d\) +B: cmp-named \(\d\d:\d\d:\d\d\)",
                        head), head
    # Every command taking a RUN takes a name; one that names no run says which are near.
    export = subprocess.run([cli_path(), "export", "cmp-named", "--format", "csv"],
                            capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert export.returncode == 0 and export.stdout.startswith("t,"), export.stderr
    proc = compare("cmp-namd", "train.py", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == ("trainvitals: cmp-namd: no such run directory (nor "
                           "trainvitals-runs/cmp-namd), nor a run named so in trainvitals-runs; "
                           "did you mean 'cmp-named'?\n"), proc.stderr


def test_jobs_on_several_nodes_are_one_column_each(tmp_path):
    # Two jobs of two nodes each, as each node's own `run --job-id` leaves them
    # under a shared root; the nodes of a job run at once.
    (tmp_path / "rates.toml").write_text(RATES)
    env = {**os.environ, **ENV}

    def node(job, name, seconds):
        return subprocess.Popen(
            [cli_path(), "run", "--quiet", "--interval", "0.2", "--config", "rates.toml",
             "--job-id", job, "--out", f"shared/{job}/{name}", "--", sys.executable, "-c",
             f"import time; time.sleep({seconds})"],
            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    for job, seconds in (("41", (0.6, 1.2)), ("42", (0.6, 0.6))):
        procs = [node(job, "node-a", seconds[0]), node(job, "node-b", seconds[1])]
        for p in procs:
            assert p.wait(timeout=60) == 0, p.stderr.read()
    proc = compare("--job", "41", "--job", "42", "--runs-dir", "shared", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    c = json.loads(proc.stdout)
    assert [r["label"] for r in c["runs"]] == ["job 41 (2 nodes)", "job 42 (2 nodes)"]
    assert [[os.path.basename(d) for d in r["run_dirs"]] for r in c["runs"]] == \
        [["node-a", "node-b"]] * 2
    figures = {f["key"]: f["values"] for f in c["figures"]}
    for i, job in enumerate(("41", "42")):
        nodes = [json.loads((tmp_path / "shared" / job / n / "summary.json").read_text())
                 for n in ("node-a", "node-b")]
        # What the job held is its nodes' sum; its duration from the first start to the last end.
        assert figures["gpu_hours"][i] == pytest.approx(
            sum(n["cost"]["gpu_hours"] for n in nodes), rel=1e-9)
        assert figures["money"][i] == pytest.approx(sum(n["cost"]["money"] for n in nodes))
        span = max(n["end_t"] for n in nodes) - min(n["start_t"] for n in nodes)
        assert figures["duration_s"][i] == pytest.approx(span, abs=1e-3)
    # The longer node sets job 41's length.
    assert figures["duration_s"][0] > figures["duration_s"][1] + 0.3
    # A run and a job side by side, in words.
    proc = compare("shared/42/node-a", "--job", "41", "--runs-dir", "shared", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].split()[-5:] == ["B:", "job", "41", "(2", "nodes)"], \
        proc.stdout
    # A job with no run directory under the root is said.
    proc = compare("--job", "41", "--job", "43", "--runs-dir", "shared", cwd=tmp_path)
    assert proc.returncode == 2 and "no run directory of job 43 under shared" in proc.stderr
