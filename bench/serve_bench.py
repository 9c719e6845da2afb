"""`trainvitals serve` on a busy node: 64 jobs (half Kubernetes pods, half
Slurm jobs, each in a cgroup of its own, made here) of about 31 sleeping
processes each, about 2,000 processes in all, on the fake driver's 8 GPUs with
8 jobs' processes on each. Measures the agent's CPU share over the window (all
threads' schedstat), its peak RSS, a scrape's time, and the series /metrics
holds per GPU and per job. Targets: at most 1 % of one core at a 1 s tick,
50 MiB; rendering is measured apart (BM_PrometheusRenderNode, at most 5 ms).

    build/venv/bin/python bench/serve_bench.py build/release/trainvitals [--seconds 60]

Needs root and a writable cgroup hierarchy (the jobs' cgroups are removed at
the end)."""
import argparse
import json
import os
import pathlib
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid

from overhead import cpu_seconds, status_kib

ROOT = pathlib.Path(__file__).resolve().parents[1]
FAKE = ROOT / "build/release/tests/fake_nvml/fake_nvml/libnvidia-ml.so.1"


def unified_root():
    with open("/proc/self/mountinfo") as f:
        for line in f:
            head, _, tail = line.partition(" - ")
            if tail.split()[0] == "cgroup2":
                return head.split()[4]
    sys.exit("no cgroup v2 hierarchy is mounted here")


def start_jobs(root, jobs, per_job):
    """Each job: a shell moved into its cgroup that starts per_job - 1 sleeps."""
    shells, dirs = [], []
    for j in range(jobs):
        if j % 2 == 0:
            path = f"/kubepods/burstable/pod{uuid.uuid4()}/{uuid.uuid4().hex * 2}"
            env = {"HOSTNAME": f"trainer-{j}"}
        else:
            path = f"/system.slice/slurmstepd.scope/job_{800000 + j}/step_0"
            env = {"SLURM_JOB_ID": str(800000 + j), "SLURM_JOB_USER": f"user{j % 10}",
                   "SLURM_JOB_ACCOUNT": "lab", "SLURM_JOB_PARTITION": "gpu"}
        d = root + path
        os.makedirs(d)
        dirs.append(d)
        script = (f'echo $$ > {d}/cgroup.procs; i=1; while [ $i -lt {per_job} ]; do '
                  'sleep 600 & i=$((i+1)); done; echo ready; wait')
        shells.append(subprocess.Popen(["sh", "-c", script], env={**os.environ, **env},
                                       stdout=subprocess.PIPE, text=True, start_new_session=True))
    for s in shells:
        s.stdout.readline()
    return shells, dirs


def stop_jobs(shells, dirs, root):
    for s in shells:
        os.killpg(s.pid, signal.SIGKILL)
        s.wait()
    time.sleep(0.5)
    for top in ("kubepods", "system.slice/slurmstepd.scope"):
        for d, _, _ in sorted(os.walk(os.path.join(root, top)), key=lambda w: -len(w[0])):
            try:
                os.rmdir(d)
            except OSError:
                pass


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def measure(command, env, port, ready, seconds):
    """An exporter's CPU share over `seconds` once /metrics says `ready`, its
    peak RSS, the median of 20 scrapes and the last page."""
    agent = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/metrics"
    try:
        for _ in range(150):
            time.sleep(0.2)
            try:
                if ready(urllib.request.urlopen(url).read().decode()):
                    break
            except OSError:
                continue
        time.sleep(5)
        c0, t0 = cpu_seconds(agent.pid), time.monotonic()
        time.sleep(seconds)
        share = (cpu_seconds(agent.pid) - c0) / (time.monotonic() - t0)
        scrapes = []
        for _ in range(20):
            t = time.perf_counter()
            text = urllib.request.urlopen(url).read().decode()
            scrapes.append(time.perf_counter() - t)
        scrapes.sort()
        return {"share": share, "hwm_mib": status_kib(agent.pid, "VmHWM") / 1024,
                "scrape_ms": 1000 * scrapes[len(scrapes) // 2], "text": text}
    finally:
        agent.send_signal(signal.SIGTERM)
        try:
            agent.wait(timeout=30)
        except subprocess.TimeoutExpired:
            agent.kill()
            agent.wait()


def peer(args, scenario, tmp):
    """nvitop-exporter 1.7.2 (`deps.sh --bench`) on the same fake GPUs, at its
    1 s interval: nvidia-ml-py dlopens "libnvidia-ml.so.1", a link to the fake
    on LD_LIBRARY_PATH. It serves device and per-process GPU series only (no
    job, no cgroup); the NVML calls the fake lacks (encoder, decoder, power
    limit, field values) it tries once and leaves out."""
    exe = pathlib.Path(sys.executable).parent / "nvitop-exporter"
    if not exe.exists():
        print("nvitop-exporter: not installed (scripts/deps.sh --bench)")
        return
    lib = pathlib.Path(tmp) / "lib"
    lib.mkdir()
    (lib / "libnvidia-ml.so.1").symlink_to(FAKE)
    env = {**os.environ, "LD_LIBRARY_PATH": str(lib), "FAKE_NVML_SCENARIO": str(scenario)}
    port = free_port()
    theirs = measure([str(exe), "--bind-address", "127.0.0.1", "--port", str(port),
                      "--interval", "1"], env, port,
                     lambda text: 'index="7"' in text, args.seconds)
    series = [l for l in theirs["text"].splitlines() if l and not l.startswith("#")]
    per_gpu = sum(1 for l in series if 'index="' in l) / 8
    print(f"nvitop-exporter 1.7.2 CPU {100 * theirs['share']:.3f} % of one core, peak RSS "
          f"{theirs['hwm_mib']:.1f} MiB, scrape median {theirs['scrape_ms']:.2f} ms, "
          f"{len(series)} series ({per_gpu:.0f} per GPU; no jobs)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cli")
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--jobs", type=int, default=64)
    ap.add_argument("--processes", type=int, default=2000)
    args = ap.parse_args()
    root = unified_root()
    per_job = max(1, args.processes // args.jobs)
    shells, dirs = start_jobs(root, args.jobs, per_job)
    tmp = tempfile.mkdtemp()
    try:
        gpus = [{"name": "NVIDIA H100 80GB HBM3", "series": {"util_gpu": 50},
                 "processes": [{"pid": shells[j].pid, "memory_bytes": 4e9, "sm_util": 40}
                               for j in range(g, args.jobs, 8)]} for g in range(8)]
        scenario = pathlib.Path(tmp) / "gpus.json"
        scenario.write_text(json.dumps({"devices": gpus}))
        env = {**os.environ, "TRAINVITALS_NVML_LIBRARY": str(FAKE),
               "FAKE_NVML_SCENARIO": str(scenario)}
        port = free_port()
        ours = measure([args.cli, "serve", "--listen", f"127.0.0.1:{port}"], env, port,
                       lambda text: text.count("trainvitals_job_info{") >= args.jobs,
                       args.seconds)
        text = ours["text"]
        series = [l for l in text.splitlines() if l and not l.startswith("#")]
        jobs = {m.group(1) for l in series for m in [re.search(r'job="([^"]+)"', l)] if m}
        per_job_series = sum(1 for l in series if 'job="' in l) / max(1, len(jobs))
        per_gpu = sum(1 for l in series if 'gpu="' in l and 'job="' not in l) / 8
        procs = sum(1 for p in os.listdir("/proc") if p.isdigit())
        print(f"jobs served {len(jobs)}, processes on the node {procs}, GPUs 8")
        print(f"serve CPU {100 * ours['share']:.3f} % of one core over {args.seconds:.0f} s "
              f"(target <= 1 %), peak RSS {ours['hwm_mib']:.1f} MiB (target <= 50 MiB)")
        print(f"scrape median {ours['scrape_ms']:.2f} ms, /metrics "
              f"{len(text) / 1024:.0f} KiB, {len(series)} series: {per_gpu:.0f} per GPU, "
              f"{per_job_series:.1f} per job")
        peer(args, scenario, tmp)
    finally:
        stop_jobs(shells, dirs, root)


if __name__ == "__main__":
    main()
