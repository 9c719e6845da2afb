"""CPU cost of `trainvitals top` at its default 1 s refresh, beside nvitop.

Target: at most 1 % of one core with 8 GPUs and 200 GPU processes, and cheaper
than nvitop on the same screen. Both run on the fake driver
(tests/fake_nvml) in a detached tmux session of 200x60 with its own socket; the
200 GPU processes are real `sleep` processes, so /proc has something to read for
each of them. After the monitor has drawn (the screen shows "GPU 7", or nvitop's
eighth GPU) and a warm-up, its own CPU time (utime + stime of
/proc/PID/stat, every thread, no children) is read over the window, as % of one
core; schedstat's run time (ns, all threads) beside it, since the tick-based
utime/stime moves in 10 ms steps. RSS is VmRSS at the end of the window.

Rows: `trainvitals top` (8 GPUs, 200 processes), `trainvitals top --no-gpus`
(the host alone, for reference), nvitop 1.7.2 `--interval 1` and nvitop at its
defaults. nvitop's --interval only sets how often it reads processes
(every interval/3 s, at most 1 s); it reads the GPUs and the host every 0.5 s and
redraws about five times a second whatever the interval, so no nvitop setting
refreshes exactly once a second: both rows are shown.

nvitop loads NVML through nvidia-ml-py, which dlopens "libnvidia-ml.so.1": a temp
folder holds a link of that name to the fake, on LD_LIBRARY_PATH. nvidia-ml-py
starts with nvmlInitWithFlags; when the fake lacks it, nvitop stops with
"NVML ERROR: Function Not Found", and this benchmark then starts nvitop through a
wrapper that answers nvmlInitWithFlags(0) with the fake's nvmlInit_v2 (one call,
at start) and says so in the table. Other NVML functions the fake lacks nvitop
shows as N/A; they are listed.

    build/venv/bin/python bench/top_bench.py build/release/trainvitals [--seconds 30]
        [--markdown FILE] [--screens DIR]
"""
import argparse
import ctypes
import json
import os
import pathlib
import random
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
GPUS, PER_GPU = 8, 25
COLUMNS, ROWS = 200, 60
TARGET_PCT = 1.0
GiB = 1 << 30

# nvitop through a wrapper: nvmlInitWithFlags, where the library lacks it, is the
# library's nvmlInit_v2 (flags 0 is plain init); every other call is untouched.
# Records each NVML function nvitop asked for that the library lacks.
NVITOP_WRAPPER = """
import os, runpy, sys
import pynvml
missing = set()
lookup = pynvml._nvmlGetFunctionPointer
def find(name):
    try:
        return lookup(name)
    except pynvml.NVMLError_FunctionNotFound:
        if name not in missing:  # written at once: no exit hook runs on a signal
            missing.add(name)
            with open(os.environ["TOP_BENCH_MISSING"], "w") as out:
                out.write("\\n".join(sorted(missing)))
        if name == "nvmlInitWithFlags":
            init = lookup("nvmlInit_v2")
            return lambda flags: init()
        raise
pynvml._nvmlGetFunctionPointer = find
sys.argv = ["nvitop"] + sys.argv[1:]
runpy.run_module("nvitop", run_name="__main__", alter_sys=True)
"""


def busy_series(rng, low, high, seconds=900, step=5):
    """Piecewise-linear utilisation that moves between low and high every step seconds."""
    return [[t, rng.randint(low, high)] for t in range(0, seconds + 1, step)]


def write_scenario(path, pids):
    rng = random.Random(7)
    devices = []
    for gpu in range(GPUS):
        processes = []
        for pid in pids[gpu * PER_GPU:(gpu + 1) * PER_GPU]:
            processes.append({"pid": pid,
                              "memory_bytes": rng.randint(256, 2560) * (1 << 20),
                              "sm_util": rng.randint(0, 100)})
        held = sum(p["memory_bytes"] for p in processes)
        devices.append({
            "name": "NVIDIA H100 80GB HBM3",
            "uuid": f"GPU-70b70b70-top-bench-{gpu}",
            "series": {"util_gpu": busy_series(rng, 70, 100),
                       "util_memory": busy_series(rng, 30, 70),
                       "memory_used_bytes": held + GiB,
                       "temperature_c": busy_series(rng, 55, 75, step=15),
                       "power_mw": busy_series(rng, 450000, 690000)},
            "processes": processes})
    path.write_text(json.dumps({"driver_version": "550.54.15", "devices": devices}))


def start_sleepers(count):
    return [subprocess.Popen(["sleep", "600"], stdin=subprocess.DEVNULL) for _ in range(count)]


def stop(procs):
    for p in procs:
        if p.poll() is None:
            p.kill()
    for p in procs:
        p.wait()


def cpu_ticks(pid):
    """utime + stime of every thread of pid (not its children), in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def run_ns(pid):
    """Run time of every live thread of pid, from schedstat, in ns."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


class Tmux:
    """One detached session of COLUMNS x ROWS on its own server (socket -L name)."""

    def __init__(self, name, tmp):
        self.base = ["tmux", "-L", name, "-f", str(tmp / "tmux.conf")]
        (tmp / "tmux.conf").write_text("set -g status off\nset -g remain-on-exit on\n")

    def start(self, argv, env):
        extra = [a for k, v in env.items() for a in ("-e", f"{k}={v}")]
        subprocess.run(self.base + ["new-session", "-d", "-s", "bench", "-x", str(COLUMNS),
                                    "-y", str(ROWS), *extra, "exec " + shlex.join(argv)],
                       check=True)
        out = subprocess.run(self.base + ["display-message", "-p", "-t", "bench",
                                          "#{pane_pid}"],
                             check=True, capture_output=True, text=True).stdout.split()
        return int(out[0])

    def screen(self):
        return subprocess.run(self.base + ["capture-pane", "-p", "-t", "bench"],
                              capture_output=True, text=True).stdout

    def dead(self):
        out = subprocess.run(self.base + ["display-message", "-p", "-t", "bench", "#{pane_dead}"],
                             capture_output=True, text=True).stdout.strip()
        return out != "0"

    def kill(self):
        socket = subprocess.run(self.base + ["display-message", "-p", "#{socket_path}"],
                                capture_output=True, text=True).stdout.strip()
        subprocess.run(self.base + ["kill-server"], capture_output=True)
        if socket:  # tmux 3.3 leaves the socket file behind
            pathlib.Path(socket).unlink(missing_ok=True)


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def wait_gone(pid, seconds):
    deadline = time.monotonic() + seconds
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not alive(pid)


def measure(name, argv, env, drawn, seconds, warmup_s, tmp):
    """Runs argv in tmux; once drawn(screen) holds (or 40 s passed), waits warmup_s,
    then measures over seconds. Returns a dict with the numbers and the last screen.
    The monitor is ended with its own `q`; one that outlives it is killed (and that is
    said), never left behind: closing tmux alone does not end every monitor."""
    tmux = Tmux(f"top-bench-{os.getpid()}-{name.strip('-')}", tmp)
    result = {"ok": False, "note": ""}
    pid = None
    try:
        pid = tmux.start(argv, env)
        deadline = time.monotonic() + 40
        screen = ""
        while time.monotonic() < deadline:
            screen = tmux.screen()
            if drawn(screen) or tmux.dead():
                break
            time.sleep(0.5)
        if tmux.dead() or not drawn(screen):
            result["screen"] = tmux.screen()
            result["note"] = "exited" if tmux.dead() else "did not draw the expected screen"
            return result
        time.sleep(warmup_s)
        t0, c0, r0 = time.monotonic(), cpu_ticks(pid), run_ns(pid)
        time.sleep(seconds)
        t1, c1, r1 = time.monotonic(), cpu_ticks(pid), run_ns(pid)
        rss = rss_mib(pid)
        if tmux.dead():
            result.update(screen=tmux.screen(), note="exited during the window")
            return result
        for _ in range(10):  # a capture can fall between a clear and a redraw
            screen = tmux.screen()
            if drawn(screen):
                break
            time.sleep(0.3)
        hz = os.sysconf("SC_CLK_TCK")
        result.update(ok=drawn(screen), screen=screen, rss_mib=rss,
                      stat_pct=(c1 - c0) / hz / (t1 - t0) * 100,
                      sched_pct=(r1 - r0) / 1e9 / (t1 - t0) * 100)
        if not result["ok"]:
            result["note"] = "the expected screen was gone at the end"
        return result
    finally:
        if pid is not None and alive(pid):
            subprocess.run(tmux.base + ["send-keys", "-t", "bench", "q"], capture_output=True)
            if not wait_gone(pid, 5):
                result["note"] += " (did not quit on q: killed)"
                os.kill(pid, signal.SIGKILL)
                wait_gone(pid, 5)
        tmux.kill()


def nvitop_drawn(screen):
    # nvitop's GPU rows start with the index after a frame character: "│   7  H100 ...".
    return re.search(r"^\W*\s7\s+.*H100", screen, re.M) is not None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cli", nargs="?", default=str(ROOT / "build" / "release" / "trainvitals"))
    parser.add_argument("--seconds", type=float, default=30, help="measured window per monitor")
    parser.add_argument("--warmup", type=float, default=3,
                        help="seconds after the first full screen before the window")
    parser.add_argument("--fake", help="the fake driver (default: beside the binary, in "
                        "tests/fake_nvml/fake_nvml/libnvidia-ml.so.1)")
    parser.add_argument("--python", default=sys.executable, help="the Python that has nvitop")
    parser.add_argument("--markdown", help="write the table as markdown here")
    parser.add_argument("--screens", help="keep each monitor's last screen in this folder")
    args = parser.parse_args()
    args.fake = pathlib.Path(args.fake or pathlib.Path(args.cli).resolve().parent / "tests" /
                             "fake_nvml" / "fake_nvml" / "libnvidia-ml.so.1")

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = pathlib.Path(tmp_name)
        sleepers = start_sleepers(GPUS * PER_GPU)
        try:
            rows = run_all(args, tmp, [p.pid for p in sleepers])
        finally:
            stop(sleepers)
    report(rows, args)


def run_all(args, tmp, pids):
    scenario = tmp / "scenario.json"
    write_scenario(scenario, pids)
    base_env = {"LANG": "C.UTF-8", "FAKE_NVML_SCENARIO": str(scenario)}
    tv_env = {**base_env, "TRAINVITALS_NVML_LIBRARY": str(args.fake)}
    (tmp / "lib").mkdir()
    (tmp / "lib" / "libnvidia-ml.so.1").symlink_to(args.fake)
    nv_env = {**base_env, "LD_LIBRARY_PATH": str(tmp / "lib"),
              "TOP_BENCH_MISSING": str(tmp / "nvitop_missing.txt")}

    fake = ctypes.CDLL(str(args.fake))
    nvitop_cmd = [args.python, "-m", "nvitop"]
    shim = ""
    if not hasattr(fake, "nvmlInitWithFlags"):
        (tmp / "nvitop_wrapper.py").write_text(NVITOP_WRAPPER)
        nvitop_cmd = [args.python, str(tmp / "nvitop_wrapper.py")]
        shim = " †"
    has_nvitop = subprocess.run([args.python, "-c", "import nvitop"],
                                capture_output=True).returncode == 0

    runs = [("trainvitals top", "1 s", [args.cli, "top"], tv_env,
             lambda s: "GPU 7" in s),
            ("trainvitals top --no-gpus", "1 s", [args.cli, "top", "--no-gpus"], tv_env,
             lambda s: "MEM" in s)]
    if has_nvitop:
        runs += [("nvitop --interval 1" + shim, "processes 0.33 s, GPUs 0.5 s",
                  nvitop_cmd + ["--monitor", "full", "--interval", "1"], nv_env, nvitop_drawn),
                 ("nvitop (defaults)" + shim, "processes 0.67 s, GPUs 0.5 s",
                  nvitop_cmd + ["--monitor", "full"], nv_env, nvitop_drawn)]
    rows = []
    for name, refresh, argv, env, drawn in runs:
        print(f"  {name}: {args.seconds:g} s ...", flush=True)
        r = measure(re.sub(r"\W+", "-", name), argv, env, drawn, args.seconds, args.warmup, tmp)
        r.update(name=name, refresh=refresh)
        rows.append(r)
        if args.screens:
            out = pathlib.Path(args.screens)
            out.mkdir(parents=True, exist_ok=True)
            (out / (re.sub(r"\W+", "_", name).strip("_") + ".txt")).write_text(r.get("screen", ""))
    if not has_nvitop:
        rows.append({"name": "nvitop", "refresh": "", "ok": False,
                     "note": f"not installed in {args.python} (scripts/deps.sh --bench)"})
    missing = tmp / "nvitop_missing.txt"
    args.nvitop_missing = missing.read_text().split() if missing.exists() else []
    args.nvitop_shim = bool(shim)
    return rows


def report(rows, args):
    lines = ["| monitor | refresh | % of one core (utime+stime) | % (schedstat) | RSS MiB |",
             "|---|---|---|---|---|"]
    for r in rows:
        if r["ok"]:
            lines.append(f"| {r['name']} | {r['refresh']} | {r['stat_pct']:.2f} | "
                         f"{r['sched_pct']:.2f} | {r['rss_mib']:.1f} |")
        else:
            lines.append(f"| {r['name']} | {r['refresh']} | not measured: {r['note']} | | |")
    notes = [f"8 fake GPUs, {GPUS * PER_GPU} GPU processes (sleeping), {COLUMNS}x{ROWS} tmux, "
             f"{args.seconds:g} s window."]
    if args.nvitop_shim:
        notes.append("† the fake driver lacks nvmlInitWithFlags, with which nvidia-ml-py starts: "
                     "nvitop ran through a wrapper that answers it with nvmlInit_v2.")
    for r in rows:
        if r["ok"] and r["note"]:
            notes.append(f"{r['name']}: {r['note'].strip()}.")
        listed = re.search(r"PROCESSES (\d+)", r.get("screen", ""))
        if r["ok"] and listed and r["name"] == "trainvitals top":
            notes.append(f"trainvitals top listed {listed.group(1)} processes "
                         f"(PROCESSES on its screen) of the {GPUS * PER_GPU} on the GPUs.")
    if args.nvitop_missing:
        notes.append("NVML functions nvitop asked for that the fake lacks: "
                     + ", ".join(args.nvitop_missing) + ".")
    print()
    print("\n".join(lines))
    for n in notes:
        print(n)
    for r in rows:
        if not r["ok"] and r.get("screen"):
            print(f"\n{r['name']}: last screen\n{r['screen'].rstrip()}")

    tv = next(r for r in rows if r["name"] == "trainvitals top")
    nvitops = [r for r in rows if r["name"].startswith("nvitop") and r["ok"]]
    if not tv["ok"]:
        verdict = f"trainvitals top: NOT MEASURED ({tv['note']})"
    else:
        pct = tv["stat_pct"]
        parts = [f"{pct:.2f} % of a core ({'ok' if pct <= TARGET_PCT else 'OVER'} "
                 f"against {TARGET_PCT:g} %)"]
        if nvitops:
            cheapest = min(nvitops, key=lambda r: r["stat_pct"])
            ratio = f"{cheapest['stat_pct'] / pct:.1f}x its cost" if pct > 0 else "more"
            parts.append(f"the cheaper nvitop, {cheapest['name']}, takes {ratio} "
                         f"({'ok' if pct < cheapest['stat_pct'] else 'NOT cheaper'})")
        else:
            parts.append("nvitop not measured: no comparison")
        verdict = "trainvitals top with 8 GPUs, 200 processes: " + "; ".join(parts)
    print(verdict)
    if args.markdown:
        text = "\n".join(lines + [""] + notes + ["", verdict])
        pathlib.Path(args.markdown).write_text(text + "\n")


if __name__ == "__main__":
    main()
