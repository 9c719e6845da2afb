"""`trainvitals analyze RUN0 RUN1` and `analyze --job ID`: the run directories
of one job's nodes judged as one job, as a user on a cluster's shared file
system calls it. The directories are written here as `run` writes them (the
real two-node job is test_multinode.py, `make test-multinode`)."""
import json
import subprocess

from conftest import cli_path

START = 1.7e9
ROWS = 240


def write_node(root, name, host, job, ranks, clock_s=0.0, steps_per_s=10):
    """A node's run directory: its ranks step together; `ranks` maps each
    rank to its data-wait share."""
    d = root / name
    d.mkdir(parents=True)
    (d / "meta.json").write_text(json.dumps(
        {"interval_s": 1, "host": host, "job": {"id": job, "kind": "given"}}))
    lines = []
    for s in range(ROWS):
        steps = s * steps_per_s
        training = {"steps": steps,
                    "ranks": [{"rank": r, "pid": 100 + r, "steps": steps, "data_wait_ratio": w}
                              for r, w in ranks.items()]}
        lines.append(json.dumps({"t": START + s + clock_s, "elapsed_s": s,
                                 "job": {"processes": len(ranks)}, "training": training}))
    (d / "samples.jsonl").write_text("\n".join(lines) + "\n")
    events = [{"t": START + clock_s, "type": "client_start", "pid": 100 + r, "rank": r}
              for r in ranks]
    events.append({"t": START + ROWS + clock_s, "type": "end", "exit_code": 0})
    (d / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    return d


def analyze(*args, cwd):
    return subprocess.run([cli_path(), "analyze", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=60)


def test_the_slow_rank_of_the_second_node_is_named_with_its_node(tmp_path):
    a = write_node(tmp_path, "job42/node-a", "gpu-a", "42", {0: 0.02, 1: 0.03})
    b = write_node(tmp_path, "job42/node-b", "gpu-b", "42", {2: 0.02, 3: 0.58}, clock_s=9)
    p = analyze("--json", a, b, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    v = json.loads(p.stdout)
    assert v["job"] == "42"
    assert [n["node"] for n in v["nodes"]] == ["gpu-a", "gpu-b"]
    assert [n["rows"] for n in v["nodes"]] == [ROWS, ROWS]
    assert abs(v["nodes"][1]["clock_offset_s"] + 9) < 0.1
    assert "gpu-b's times moved by -9.00 s" in v["clocks"][0]
    stragglers = [f for f in v["findings"] if f["id"] == "straggler"]
    assert len(stragglers) == 1, v["findings"]
    assert stragglers[0]["subject"] == {"rank": 3, "node": "gpu-b"}
    assert stragglers[0]["evidence"]["data_wait_ratio"] == 0.58
    assert all(f["subject"].get("node") in ("gpu-a", "gpu-b") for f in v["findings"])

    # The same job found by its id under the shared root, in words.
    p = analyze("--job", "42", "--runs-dir", tmp_path, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "job 42 — 2 nodes" in p.stdout
    assert "Node     gpu-b:" in p.stdout
    assert "rank 3 on gpu-b" in p.stdout.lower()


def test_a_job_whose_ranks_step_together_has_no_straggler(tmp_path):
    a = write_node(tmp_path, "a", "gpu-a", "7", {0: 0.1, 1: 0.12})
    b = write_node(tmp_path, "b", "gpu-b", "7", {2: 0.11, 3: 0.1})
    p = analyze("--json", a, b, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert [f for f in json.loads(p.stdout)["findings"] if f["id"] == "straggler"] == []


def test_directories_of_two_jobs_are_refused_naming_them(tmp_path):
    a = write_node(tmp_path, "a", "gpu-a", "7", {0: 0.1})
    b = write_node(tmp_path, "b", "gpu-b", "8", {1: 0.1})
    p = analyze(a, b, cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr.strip() == f"trainvitals: {a} is job 7 and {b} is job 8: not one job's nodes"
    p = analyze("--job", "9", "--runs-dir", tmp_path, cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr.strip() == f"trainvitals: no run directory of job 9 under {tmp_path}"
