"""--visualdl writes vdlrecords files that VisualDL's own LogReader loads, with the same tags,
values and steps as the TensorBoard scalars."""
import glob
import os

import pytest

from conftest import helper

visualdl = pytest.importorskip("visualdl")


def scalars(path, tag):
    reader = visualdl.LogReader(file_path=str(path))
    return reader.get_data("scalar", tag)


def test_visualdl_reader_reads_our_scalars(run_tv, tmp_path):
    logdir = tmp_path / "vdl"
    r = run_tv([*helper("burn.py"), "1.5"], "--visualdl", str(logdir))
    assert r.proc.returncode == 0, r.proc.stderr
    files = glob.glob(os.path.join(logdir, "system", "vdlrecords.*.log"))
    assert len(files) == 1
    assert abs(int(os.path.basename(files[0]).split(".")[1]) - r.meta["start_t"]) < 2
    mem = scalars(files[0], "job/memory_mib")
    rows = r.rows
    assert len(mem) == len(rows)
    for value, row in zip(mem, rows):
        assert value.value == pytest.approx(row["job"]["memory_bytes"] / 2**20, rel=1e-6)
        assert value.timestamp == round(row["t"] * 1000)
    steps = [v.id for v in scalars(files[0], "system/cpu_util_ratio")]
    assert steps == sorted(set(steps))
    assert len(scalars(files[0], "job/memory_mib_max")) == len(rows)

    r2 = run_tv(["sleep", "1.2"], "--visualdl", str(logdir), name="again")
    assert r2.proc.returncode == 0, r2.proc.stderr
    assert len(glob.glob(os.path.join(logdir, "system", "vdlrecords.*"))) == 2
    reader = visualdl.LogReader(logdir=str(logdir))
    assert len(reader.logs()) == 1  # one run directory: system


def test_unusable_visualdl_dir_fails_before_the_child_starts(tv, tmp_path):
    import subprocess

    blocker = tmp_path / "file"
    blocker.write_text("")
    proc = subprocess.run([tv, "run", "--out", str(tmp_path / "run"), "--visualdl", str(blocker),
                           "--", "true"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "--visualdl" in proc.stderr
