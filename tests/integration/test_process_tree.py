"""The whole process tree is followed; memory counts shared pages once."""
import sys

import pytest

from conftest import cpu_seconds, helper

MiB = 1 << 20


def test_forked_workers_memory_counts_shared_pages_once(run_tv):
    r = run_tv([*helper("forked_memory.py"), "15"], timeout=120)
    assert r.proc.returncode == 0, r.proc.stderr
    rows = r.rows
    alive = [row for row in rows if row["job"].get("processes_max") == 3]
    assert len(alive) >= 8, [row["job"].get("processes") for row in rows]
    peak = r.summary["job"]["memory_bytes"]["max"]
    rss_peak = r.summary["job"]["rss_bytes"]["max"]
    true_total = int(r.proc.stdout.split("pss_total_bytes")[1].split()[0])
    assert 380 * MiB < true_total < 480 * MiB, true_total / MiB  # about 400 MB, as built
    assert abs(peak - true_total) <= 0.10 * true_total, (peak / MiB, true_total / MiB, rss_peak / MiB)
    assert rss_peak > 1.6 * peak  # what summed RSS would have claimed
    assert max(row["job"]["memory_bytes_max"] for row in rows) == peak


def test_a_busy_child_shows_about_one_core(run_tv):
    r = run_tv([*helper("burn.py"), "4"])
    got = float(r.proc.stdout.split("cpu_ratio")[1].split()[0])  # what the kernel gave it
    assert got > 0.25, got  # it burned (a loaded machine gives it less than a core)
    busy = [row["job"]["cpu_cores"] for row in r.rows if 2.0 <= row["elapsed_s"] <= 5.0]
    assert busy, r.rows
    mean = sum(busy) / len(busy)
    assert abs(mean - got) <= 0.15, (busy, got)
    for cores in busy:
        assert cores <= 1.15, busy
    assert r.summary["job"]["cpu_cores"]["max"] <= 1.3


def test_short_lived_children_are_seen_and_never_errors(run_tv):
    script = "for i in $(seq 20); do sleep 0.05 & done; wait; sleep 0.3"
    r = run_tv(["sh", "-c", script])
    assert r.proc.returncode == 0
    assert "error" not in r.proc.stderr.lower()
    starts = [e for e in r.events if e["type"] == "process_start"]
    assert len(starts) >= 2


@pytest.mark.parametrize("mode", ["wait", "orphan"])
def test_cpu_of_children_that_live_between_samples_is_counted(run_tv, mode):
    # One core of work in 0.08 s children: most are never seen by a sample, so
    # their time arrives through the reaper's children usage (the parent's
    # cutime, or the supervisor's own for orphans it reaps).
    r = run_tv([*helper("short_children.py"), "4", "0.08", mode], timeout=120)
    assert r.proc.returncode == 0, r.proc.stderr
    words = r.proc.stdout.split()
    truth = float(words[words.index("cpu_seconds") + 1])  # what each process used, by itself
    wall = float(words[words.index("wall_s") + 1])
    assert int(words[words.index("children") + 1]) >= 10, r.proc.stdout
    got = cpu_seconds(r.rows)
    assert abs(got - truth) <= 0.12 * truth, (got, truth, wall)
    assert abs(r.summary["job"]["cpu_cores"]["mean"] * r.summary["duration_s"] - truth) <= 0.2 * truth


def test_peak_memory_while_workers_are_zombies(run_tv):
    r = run_tv(helper("zombie_peak.py"), timeout=120)
    assert r.proc.returncode == 0, r.proc.stderr
    words = r.proc.stdout.split()
    assert words[words.index("states") + 1] == "ZZZ", r.proc.stdout
    truth = int(words[words.index("peak_bytes") + 1])
    assert truth > 750 * MiB, truth / MiB
    peak = r.summary["job"]["memory_bytes"]["max"]
    assert 0.92 * truth <= peak <= 1.1 * truth, (peak / MiB, truth / MiB)
