"""`trainvitals pick` from start to answer on the fake driver's eight GPUs
(target: at most 300 ms). The fake driver's utilisation buffer starts empty at
each load, so every run here also waits the quarter second a freshly loaded
driver is given; a real driver's buffer already holds its history."""
import os
import pathlib
import statistics
import subprocess
import sys
import time

root = pathlib.Path(__file__).resolve().parent.parent
cli = sys.argv[1] if len(sys.argv) > 1 else str(root / "build" / "release" / "trainvitals")
env = {**os.environ,
       "TRAINVITALS_NVML_LIBRARY": str(root / "build" / "release" / "tests" / "fake_nvml" /
                                       "fake_nvml" / "libnvidia-ml.so.1"),
       "FAKE_NVML_SCENARIO": str(root / "tests" / "fake_nvml" / "scenarios" / "eight_gpus.json")}
times = []
for _ in range(10):
    start = time.perf_counter()
    subprocess.run([cli, "pick", "2"], env=env, check=False, capture_output=True)
    times.append((time.perf_counter() - start) * 1000)
median = statistics.median(times)
print(f"pick 2 of 8 GPUs: median {median:.0f} ms, max {max(times):.0f} ms "
      f"({'ok' if median <= 300 else 'OVER'} against 300 ms)")
