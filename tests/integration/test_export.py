"""`trainvitals export RUN --format csv` flattens samples.jsonl; pandas reads both the same."""
import json
import subprocess

import pytest

from conftest import helper

pd = pytest.importorskip("pandas")


def export(tv, *args):
    return subprocess.run([tv, "export", *map(str, args)], capture_output=True, text=True, timeout=60)


def test_csv_agrees_with_samples_jsonl(tv, run_tv, tmp_path):
    r = run_tv([*helper("burn.py"), "1.5"], "--interval", "0.5")
    assert r.proc.returncode == 0, r.proc.stderr
    csv_path = tmp_path / "samples.csv"
    p = export(tv, r.out, "--format", "csv", "--output", csv_path)
    assert p.returncode == 0, p.stderr
    csv = pd.read_csv(csv_path)
    js = pd.json_normalize(pd.read_json(r.out / "samples.jsonl", lines=True).to_dict("records"))
    assert len(csv) == len(js) == len(r.rows)
    for col in ("t", "elapsed_s", "host.cpu_util_ratio", "job.memory_bytes", "job.memory_bytes_max",
                "job.cpu_cores"):
        assert col in csv.columns
        assert list(csv[col]) == pytest.approx(list(js[col]), rel=1e-9, nan_ok=True), col
    cores = [c for c in csv.columns if c.startswith("host.core_util_ratio.")]
    assert cores and cores[0] == "host.core_util_ratio.0"
    for i, row in enumerate(r.rows):
        for k, v in enumerate(row["host"].get("core_util_ratio", [])):
            assert csv[f"host.core_util_ratio.{k}"][i] == pytest.approx(v)
    # Every flattened value of the JSON appears in its column.
    for col in js.columns:
        if col in csv.columns:
            assert list(csv[col].fillna(-1)) == pytest.approx(list(js[col].fillna(-1))), col


def test_stdout_and_gpu_columns(tv, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    rows = [{"t": 1, "host": {"cpu_util_ratio": 0.5}, "gpus": [{"index": 0, "util_ratio": 0.25}]},
            {"t": 2, "host": {"cpu_util_ratio": 0.75}, "gpus": [{"index": 0, "util_ratio": 1}],
             "job": {"memory_bytes": 7}}]
    (run / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    p = export(tv, run, "--format", "csv")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [
        "t,host.cpu_util_ratio,gpu0.index,gpu0.util_ratio,job.memory_bytes",
        "1,0.5,0,0.25,",
        "2,0.75,0,1,7",
    ]


def test_missing_and_garbled_runs_name_the_file_and_line(tv, tmp_path):
    p = export(tv, tmp_path / "nope")
    assert p.returncode == 2 and str(tmp_path / "nope") in p.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    p = export(tv, empty)
    assert p.returncode == 2 and "samples.jsonl" in p.stderr
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "samples.jsonl").write_text('{"t": 1}\n{"t": 2\n{"t": 3}\n')
    p = export(tv, bad, "--output", tmp_path / "out.csv")
    assert p.returncode == 2
    assert f"{bad / 'samples.jsonl'}:2:" in p.stderr
    assert not (tmp_path / "out.csv").exists()
