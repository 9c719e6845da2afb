"""Verdicts a user can trust from the first minute: four real trainings at once.

A plain PyTorch loop starved by its loader, a loop that hangs for most of its
run, a Keras job and a healthy loop run side by side under `trainvitals run`
(they mostly sleep or run one thread, so together they take the longest one's
minute). Each is checked for its finding and when it opened, where its time
went against the loop's own clock, and a score that stands on that time.
"""
import json
import os
import re
import subprocess
import sys
import time

import pytest

from conftest import HELPERS, ROOT, Run, cli_path
from test_frameworks import TORCH_PY, env

# The loop that hangs: steps for a while, then sleeps with its process alive,
# printing its own clock: when it stepped last and when it ended.
HUNG = """
import sys, time
import torch, trainvitals.torch
m = trainvitals.torch.monitor()
model = torch.nn.Linear(4, 1)
begin = time.time()
for i in range(60):
    model(torch.randn(8, 4)).sum().backward()
    time.sleep(0.05)
    m.step()
last = time.time()
time.sleep(float(sys.argv[1]))
print("stepped", last - begin, "hung", time.time() - last, flush=True)
"""


def start(tv, out, command, *flags):
    args = [tv, "run", "--out", str(out), "--interval", "1", *flags, "--", *command]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env(), cwd=ROOT)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    if not TORCH_PY.exists():
        pytest.skip(f"{TORCH_PY} is missing: `make deps` creates it")
    tv = cli_path()
    tmp = tmp_path_factory.mktemp("goodput")
    (tmp / "hung.py").write_text(HUNG)
    # Only the hung loop judges stalls sooner than the default minute, so that
    # its run stays short; every other run has the defaults.
    (tmp / "hung.toml").write_text("[findings]\nstalled_s = 8\n")
    input_train = str(HELPERS / "input_train.py")
    procs = {
        "starved": start(tv, tmp / "starved", [str(TORCH_PY), input_train, "--seconds", "62",
                                                 "--sleep-ms", "95", "--work-ms", "5"]),
        "healthy": start(tv, tmp / "healthy", [str(TORCH_PY), input_train, "--seconds", "45",
                                                 "--sleep-ms", "0", "--work-ms", "20"]),
        "hung": start(tv, tmp / "hung", [str(TORCH_PY), str(tmp / "hung.py"), "30"],
                      "--config", str(tmp / "hung.toml")),
        "keras": start(tv, tmp / "keras", [sys.executable, str(ROOT / "examples" / "keras_train.py"),
                                           "--epochs", "3", "--steps", "3000"]),
    }
    done = {}
    for name, p in procs.items():
        stdout, stderr = p.communicate(timeout=300)
        done[name] = Run(subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr),
                         tmp / name)
        assert p.returncode == 0, (name, stderr[-3000:])
    return done


def goodput(run):
    return run.summary["health"]["goodput"]


def first_step_t(run):
    return min(r["t"] for r in run.rows if (r.get("training") or {}).get("steps", 0) > 0)


def clock(run, word):
    return float(run.proc.stdout.split(word)[1].split()[0])


def check_adds_up(run):
    g = goodput(run)
    assert sum(g["percent"].values()) == 100, g
    assert sum(g["seconds"].values()) == pytest.approx(g["wall_s"], abs=0.01), g
    h = run.summary["health"]
    assert 100 + sum(item["points"] for item in h["breakdown"]) == h["score"], h


def test_a_starved_loop_is_input_bound_within_a_minute_and_scores_low(runs):
    run = runs["starved"]
    assert [f["id"] for f in run.summary["findings"]] == ["input-bound"], run.summary["findings"]
    opened = next(e for e in run.events if e["type"] == "finding_open")
    assert opened["t"] - first_step_t(run) <= 60, opened
    g = goodput(run)
    # The loop's own clock: the share of its loop it waited for batches.
    stepping = g["seconds"]["productive"] + g["seconds"]["data_wait"]
    assert g["seconds"]["data_wait"] / stepping == pytest.approx(clock(run, "fetched"), abs=0.03)
    score = run.summary["health"]["score"]
    assert score <= 50 and score <= 100 * (1 - g["ratios"]["data_wait"]) + 1, run.summary["health"]
    assert "waiting for input" in run.summary["health"]["breakdown"][0]["what"]
    check_adds_up(run)
    # The summary says where the time went beside the score.
    text = run.proc.stderr
    assert re.search(r"  Time     productive steps \d+%, .*waiting for input \d+%", text), text
    assert f"  Health   {score:.0f}/100 (-" in text, text


def test_a_loop_hung_for_most_of_its_run_is_stalled_for_that_time(runs):
    run = runs["hung"]
    ids = [f["id"] for f in run.summary["findings"]]
    assert ids == ["stalled"], run.summary["findings"]
    stalled = run.summary["findings"][0]
    pid = stalled["subject"]["pid"]
    # One process: its stacks say where it hangs, and no collective advice.
    assert stalled["evidence"]["waits_in"] == "sleep", stalled
    assert (run.out / stalled["evidence"]["stacks"]).is_file()
    assert stalled["advice"][0].startswith("It sleeps at "), stalled["advice"]
    assert "NCCL" not in stalled["advice"][0] and pid > 0
    g = goodput(run)
    hung_share = clock(run, "hung") / g["wall_s"]
    assert g["ratios"]["stalled"] == pytest.approx(hung_share, abs=0.03), g
    assert run.summary["health"]["score"] <= 50, run.summary["health"]
    check_adds_up(run)


def test_a_healthy_loop_gets_nothing_and_its_productive_time(runs):
    run = runs["healthy"]
    assert run.summary["findings"] == []
    g = goodput(run)
    stepping = g["seconds"]["productive"] + g["seconds"]["data_wait"]
    assert g["seconds"]["productive"] / stepping == pytest.approx(1 - clock(run, "fetched"),
                                                                  abs=0.03)
    assert g["ratios"]["stalled"] == 0 and g["ratios"]["idle_gpu"] == 0
    assert run.summary["health"]["score"] >= 90, run.summary["health"]
    check_adds_up(run)


def test_a_keras_job_splits_its_time_into_start_up_training_and_evaluation(runs):
    run = runs["keras"]
    g = goodput(run)
    assert run.summary["findings"] == [], run.summary["findings"]
    # Keras measures no data wait: its time is productive, start-up (TensorFlow's
    # import and the first compiled step), evaluation (validation_data) and the
    # teardown after its last epoch.
    assert "productive_ratio" in g and g["ratios"]["data_wait"] == 0
    assert g["ratios"]["startup"] > 0.05 and g["ratios"]["productive"] > 0.1, g
    # Its productive time is training: no more than the train phase took.
    train_s = run.summary["phases"]["train"]["duration_s"]
    assert g["seconds"]["productive"] <= train_s + 1.5, (g, run.summary["phases"])
    eval_s = run.summary["phases"].get("eval", {}).get("duration_s", 0)
    # Split at the phase changes inside a row: a 0.1 s evaluation in a 1 s row books 0.1 s.
    assert g["seconds"]["evaluation"] == pytest.approx(eval_s, abs=0.5), (g, run.summary["phases"])
    check_adds_up(run)
    assert run.summary["health"]["score"] >= 90, run.summary["health"]


def test_analyze_reaches_the_same_time_split_and_score(runs):
    for name in ("starved", "hung"):
        run = runs[name]
        out = subprocess.run([cli_path(), "analyze", "--json", str(run.out)], capture_output=True,
                             text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        verdict = json.loads(out.stdout)
        assert verdict["health"]["score"] == run.summary["health"]["score"], name
        assert verdict["health"]["goodput"]["percent"] == goodput(run)["percent"], name
