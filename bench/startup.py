"""Start-up cost: the wall time of `trainvitals run -- true` against bare `true`,
with the fake driver made as slow to initialise as a real one (`init_delay_s`,
80 ms as measured on an H200 host) and, where a real driver is installed, with
it. Paired runs, alternating, medians. Usage:
  startup.py TRAINVITALS FAKE_LIBRARY [--runs N] [--init-delay S]"""
import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import tempfile
import time


def wall(argv, env):
    started = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - started) * 1000


def measure(tv, env, runs, tmp):
    bare, ours = [], []
    for i in range(runs):
        bare.append(wall(["true"], env))
        out = tmp / f"r{i}"
        ours.append(wall([tv, "run", "--quiet", "--out", str(out), "--", "true"], env))
        shutil.rmtree(out, ignore_errors=True)
    b, o = statistics.median(bare), statistics.median(ours)
    return b, o


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tv")
    ap.add_argument("fake")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--init-delay", type=float, default=0.08)
    args = ap.parse_args()
    tmp = pathlib.Path(tempfile.mkdtemp())
    scenario = tmp / "slow.json"
    scenario.write_text(json.dumps({"init_delay_s": args.init_delay,
                                    "devices": [{"uuid": "GPU-slow"}]}))
    cases = [("no driver library", {"TRAINVITALS_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1"}),
             (f"fake driver, nvmlInit {args.init_delay * 1000:.0f} ms",
              {"TRAINVITALS_NVML_LIBRARY": args.fake, "FAKE_NVML_SCENARIO": str(scenario)})]
    if any(pathlib.Path(d, "libnvidia-ml.so.1").exists()
           for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib")):
        cases.append(("the installed NVIDIA driver", {}))
    print(f"{'driver':38s} {'true':>9s} {'run -- true':>12s} {'adds':>9s}   (medians of {args.runs})")
    for name, extra in cases:
        env = {k: v for k, v in os.environ.items() if k != "TRAINVITALS_NVML_LIBRARY"}
        env.update(extra)
        b, o = measure(args.tv, env, args.runs, tmp)
        verdict = "ok" if o - b <= 20 else "OVER 20 ms"
        print(f"{name:38s} {b:7.1f} ms {o:9.1f} ms {o - b:6.1f} ms   {verdict}")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
