#!/usr/bin/env python3
"""`make soak`: trainvitals run at 100 Hz for SOAK_SECONDS (default 3600) on a
churning tree of 64 processes with a marker stream (scripts/soak/workload.py),
while /metrics is scraped 20 times a second. Measures the monitor's RSS once a
second (its slope, by least squares after the first tenth of the run), checks
that every line of samples.jsonl and events.jsonl is valid JSON and that no row
is missing (one per interval, none more than 1.5 intervals after the last), and
that every scrape answered. Writes build/soak/result.json and prints a
Markdown table; fails when a line is invalid, a row or a scrape is lost.

Environment: SOAK_SECONDS, TRAINVITALS_BUILD (default build/release)."""
import json
import os
import pathlib
import socket
import subprocess
import sys
import threading
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[1]
SECONDS = float(os.environ.get("SOAK_SECONDS", "3600"))
BUILD = ROOT / os.environ.get("TRAINVITALS_BUILD", "build/release")
INTERVAL_S = 1.0
SCRAPES_PER_S = 20


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_bytes(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def slope_per_hour(points):
    """Least-squares slope of (t seconds, value) points, per hour."""
    n = len(points)
    if n < 2:
        return None
    mt = sum(t for t, _ in points) / n
    mv = sum(v for _, v in points) / n
    den = sum((t - mt) ** 2 for t, _ in points)
    return sum((t - mt) * (v - mv) for t, v in points) / den * 3600 if den else None


def check_jsonl(path):
    valid = invalid = 0
    rows = []
    with open(path, "rb") as f:
        for line in f:
            try:
                rows.append(json.loads(line))
                valid += 1
            except ValueError:
                invalid += 1
    return rows, valid, invalid


def scraper(url, until, stats):
    """Scrapes SCRAPES_PER_S times a second from the first answer until `until`
    (monotonic), while the training still runs."""
    period = 1.0 / SCRAPES_PER_S
    answered = False
    next_at = time.monotonic()
    while time.monotonic() < until:
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                body = r.read()
                ok = r.status == 200 and body.endswith(b"\n")
                error = None if ok else f"status {r.status}, {len(body)} bytes"
        except OSError as e:
            ok, error = False, repr(e)
        answered = answered or ok
        if answered:
            stats["ok" if ok else "failed"] += 1
            if error and len(stats["errors"]) < 10:
                stats["errors"].append(error)
        next_at += period
        time.sleep(max(0.0, next_at - time.monotonic()))


def main():
    out = ROOT / "build" / "soak"
    run_dir = out / "run"
    subprocess.run(["rm", "-rf", str(run_dir)], check=True)
    out.mkdir(parents=True, exist_ok=True)
    port = free_port()
    url = f"http://127.0.0.1:{port}/metrics"
    cmd = [str(BUILD / "trainvitals"), "run", "--out", str(run_dir), "--quiet",
           "--sample-hz", "100", "--interval", str(INTERVAL_S),
           "--prometheus", f"127.0.0.1:{port}", "--", sys.executable,
           str(ROOT / "scripts" / "soak" / "workload.py"), "--seconds", str(SECONDS)]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python")}
    started = time.monotonic()
    tv = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True)
    stats = {"ok": 0, "failed": 0, "errors": []}
    # Scrapes stop half a second before the training does: after it, the
    # endpoint goes away with the run.
    scrape = threading.Thread(target=scraper, args=(url, started + SECONDS - 0.5, stats),
                              daemon=True)
    scrape.start()
    rss = []
    cpu0 = cpu_last = None
    while tv.poll() is None:
        t = time.monotonic() - started
        value = rss_bytes(tv.pid)
        if value is not None:
            rss.append((t, value))
        try:
            with open(f"/proc/{tv.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
                cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
                cpu0 = cpu0 or (t, cpu)
                cpu_last = (t, cpu)
        except (OSError, IndexError):
            pass
        time.sleep(1)
    stderr = tv.stderr.read()
    scrape.join()
    wall = time.monotonic() - started

    rows, rows_valid, rows_invalid = check_jsonl(run_dir / "samples.jsonl")
    _, events_valid, events_invalid = check_jsonl(run_dir / "events.jsonl")
    summary = json.loads((run_dir / "summary.json").read_text())
    times = [r["t"] for r in rows if isinstance(r, dict) and "t" in r]
    gaps = sum(1 for a, b in zip(times, times[1:]) if b - a > 1.5 * INTERVAL_S)
    duration = summary.get("duration_s", wall)
    expected = int(duration / INTERVAL_S)  # a last part-interval may add one more row
    settled = [(t, v) for t, v in rss if t >= SECONDS / 10]
    steps = (rows[-1].get("training", {}) or {}).get("steps") if rows else None
    result = {
        "seconds": round(wall, 1),
        "exit_code": tv.returncode,
        "rows": rows_valid,
        "rows_expected": expected,
        "rows_lost": max(0, expected - rows_valid),
        "rows_written_by_summary": summary.get("rows"),
        "rows_dropped_by_summary": summary.get("rows_dropped"),
        "samples": summary.get("samples"),
        "row_gaps": gaps,
        "invalid_lines": rows_invalid + events_invalid,
        "events": events_valid,
        "scrapes_ok": stats["ok"],
        "scrapes_failed": stats["failed"],
        "scrape_errors": stats["errors"],
        "rss_start_mib": round(settled[0][1] / 2**20, 2) if settled else None,
        "rss_end_mib": round(rss[-1][1] / 2**20, 2) if rss else None,
        "rss_max_mib": round(max(v for _, v in rss) / 2**20, 2) if rss else None,
        "rss_slope_mib_per_hour": (round(slope_per_hour(settled) / 2**20, 3)
                                   if len(settled) > 1 else None),
        "monitor_cpu_core_ratio": (round((cpu_last[1] - cpu0[1]) / (cpu_last[0] - cpu0[0]), 4)
                                   if cpu0 and cpu_last and cpu_last[0] > cpu0[0] else None),
        "training_steps": steps,
    }
    (out / "result.json").write_text(json.dumps(result, indent=1) + "\n")
    (out / "rss.csv").write_text("t_s,rss_bytes\n" + "".join(f"{t:.1f},{v}\n" for t, v in rss))
    print("| measure | value |\n|---|---|")
    for k, v in result.items():
        print(f"| {k} | {v} |")
    if stderr.strip():
        print("trainvitals stderr:\n" + stderr[-2000:])
    bad = (result["invalid_lines"] or result["rows_lost"] or result["row_gaps"]
           or result["rows_dropped_by_summary"]
           or result["scrapes_failed"] or result["exit_code"] != 0)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
