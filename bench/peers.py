"""The peers trainvitals is measured against, each used the way its users use it.

`sample`: psutil reading what one trainvitals tick reads, for the per-sample
ratio. For the host: per-CPU times, memory, swap, load, per-disk and per-NIC
counters. For each process of the tree rooted at PID: CPU times, memory info,
threads, I/O counters, and its children (found the way psutil finds them).
Prints CPU microseconds per full sample (process_time, so only this process's CPU).

`monitor`: one peer's monitor running at HZ on the tree rooted at PID, keeping
one record per second as trainvitals does, until SIGTERM. Prints "ready" once
imported and started (the imports are not part of the steady cost), or
"unavailable: REASON" and exits 3 when the peer cannot run here (gpustat and
NVIDIA's library without a driver).
  psutil   the `sample` reads at HZ, a hand-written loop (what a psutil-based monitor does)
  nvitop   ResourceMetricCollector(interval=1/HZ) on the tree, collect() each second
  gpustat  GPUStatCollection.new_query() at HZ (GPUs only: it has no host mode)
  mlflow   MLflow's SystemMetricsMonitor, sampling at HZ, logging each second to a file store

    python bench/peers.py sample ROOT_PID [ITERATIONS]
    python bench/peers.py monitor psutil|nvitop|gpustat|mlflow ROOT_PID [HZ]
"""
import os
import signal
import sys
import tempfile
import threading
import time

import psutil

PEERS = ("psutil", "nvitop", "gpustat", "mlflow")


def one_sample(root):
    psutil.cpu_times(percpu=True)
    psutil.virtual_memory()
    psutil.swap_memory()
    psutil.getloadavg()
    psutil.disk_io_counters(perdisk=True)
    psutil.net_io_counters(pernic=True)
    procs = [root] + root.children(recursive=True)
    for p in procs:
        try:
            with p.oneshot():
                p.cpu_times()
                p.memory_info()
                p.num_threads()
                p.io_counters()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
    return len(procs)


def sample(root_pid, iterations):
    root = psutil.Process(root_pid)
    n = one_sample(root)  # warm up
    start = time.process_time()
    for _ in range(iterations):
        one_sample(root)
    cpu = time.process_time() - start
    print(f"psutil_sample_us {cpu / iterations * 1e6:.1f} processes {n}")


def every(period_s, stop, work):
    """Calls work() every period_s on a fixed schedule until stop is set."""
    next_t = time.monotonic()
    while not stop.is_set():
        work()
        next_t += period_s
        stop.wait(max(0.0, next_t - time.monotonic()))


def unavailable(reason):
    print(f"unavailable: {reason}", flush=True)
    sys.exit(3)


def monitor(name, root_pid, hz, stop):
    period = 1.0 / hz
    if name == "psutil":
        root = psutil.Process(root_pid)
        ready()
        every(period, stop, lambda: one_sample(root))
    elif name == "nvitop":
        from nvitop import Device, ResourceMetricCollector
        try:
            devices = Device.all()
        except Exception:  # no NVIDIA library: host metrics only
            devices = []
        collector = ResourceMetricCollector(devices=devices, root_pids={root_pid}, interval=period)
        collector.start("bench")
        ready()
        every(1.0, stop, collector.collect)
        collector.stop()
    elif name == "gpustat":
        import gpustat
        try:
            gpustat.new_query()
        except Exception as e:  # pynvml's NVMLError_LibraryNotFound without a driver
            unavailable(f"gpustat needs NVIDIA's library ({type(e).__name__})")
        ready()
        every(period, stop, gpustat.new_query)
    elif name == "mlflow":
        os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")  # no database server here
        import mlflow
        from mlflow.system_metrics.system_metrics_monitor import SystemMetricsMonitor
        with tempfile.TemporaryDirectory() as store:
            mlflow.set_tracking_uri(f"file://{store}")
            mlflow.set_experiment("bench")
            with mlflow.start_run() as run:
                m = SystemMetricsMonitor(run.info.run_id, sampling_interval=period,
                                         samples_before_logging=max(1, round(hz)))
                m.start()
                ready()
                stop.wait()
                m.finish()
    else:
        sys.exit(f"unknown peer {name}; one of {', '.join(PEERS)}")


def ready():
    print("ready", flush=True)


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "sample":
        sample(int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 200)
    elif mode == "monitor":
        os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
        os.environ.setdefault("DO_NOT_TRACK", "true")
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        monitor(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]) if len(sys.argv) > 4 else 10.0, stop)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
