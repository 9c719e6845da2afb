"""What a profile capture costs the training, per framework.

Usage: build/venv/bin/python bench/profile_cost.py build/release/trainvitals [--steps 20]

Runs each example training (examples/*.py: a plain PyTorch loop, Lightning,
Keras, Paddle) under `trainvitals run`, lets it settle, then asks it for a
capture of N steps with `trainvitals profile RUN --steps N --json` and
compares: the steps' own time before the capture (the rows' step rate over
the 5 s before it, epoch boundaries included) against the capture's time
(`seconds`: the profiler's start, the steps under it and the trace's export
at the end). The difference is what the capture cost the training, once
(within the noise of the rate when it is small); the budget
(`profile_budget`, 1 % of the run's time) bounds how often it may come.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
EXAMPLES = {
    "torch loop": "torch_monitor.py",
    "lightning": "lightning_train.py",
    "keras": "keras_train.py",
    "paddle": "paddle_train.py",
}


def rows(run):
    out = []
    for line in (run / "samples.jsonl").read_text().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            pass  # the line being written
    return out


def step_rate(run, since):
    rates = [r["training"]["steps_per_second"] for r in rows(run)
             if r.get("t", 0) >= since and r.get("training", {}).get("steps_per_second")]
    return statistics.median(rates) if rates else None


def measure(cli, name, script, steps):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python"), "TF_CPP_MIN_LOG_LEVEL": "3"}
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        job = subprocess.Popen([cli, "run", "--quiet", "--out", str(run), "--", PY,
                                str(ROOT / "examples" / script), "--epochs", "1000", "--steps",
                                "50"], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        try:
            deadline = time.time() + 120
            while not (run / "samples.jsonl").exists() or not any(
                    r.get("training", {}).get("steps") for r in rows(run)):
                if time.time() > deadline or job.poll() is not None:
                    return None
                time.sleep(0.5)
            time.sleep(10)  # past the start-up: compiled, warm caches
            before = step_rate(run, time.time() - 5)
            asked = subprocess.run([cli, "profile", str(run), "--steps", str(steps), "--json"],
                                   capture_output=True, text=True, timeout=180, env=env)
            if asked.returncode != 0 or not before:
                print(f"  {name}: no capture: {asked.stderr.strip()}")
                return None
            (e,) = json.loads(asked.stdout)
            return before, e
        finally:
            job.terminate()  # trainvitals forwards it to the training
            job.wait()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("cli")
    p.add_argument("--steps", type=int, default=20)
    args = p.parse_args()
    print(f"| framework | step (ms) | {args.steps} steps (s) | captured (s) | cost (s) | "
          f"step under the profiler (ms) |")
    print("|---|---|---|---|---|---|")
    for name, script in EXAMPLES.items():
        got = measure(args.cli, name, script, args.steps)
        if got is None:
            print(f"| {name} | not run | | | | |")
            continue
        rate, e = got
        plain = args.steps / rate
        seconds = e.get("seconds", 0.0)
        traced = e.get("trace_step_s")
        print(f"| {name} | {1000 / rate:.1f} | {plain:.2f} | {seconds:.2f} | "
              f"{seconds - plain:+.2f} | {traced * 1000 if traced else float('nan'):.1f} |")


if __name__ == "__main__":
    main()
