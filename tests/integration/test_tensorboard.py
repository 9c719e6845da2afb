"""--tensorboard writes event files that the real readers (TensorBoard's EventAccumulator, tbparse)
load: tags from the metric table, memory in MiB, steps increasing, a cut file still readable."""
import glob
import os
import re
import shutil
import socket
import subprocess
import sys

import pytest

from conftest import helper

pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402


def event_files(logdir):
    return sorted(glob.glob(os.path.join(logdir, "system", "events.out.tfevents.*")))


def load(path):
    acc = EventAccumulator(str(path), size_guidance={"scalars": 0})
    acc.Reload()
    return acc


@pytest.fixture
def tb_run(run_tv, tmp_path):
    logdir = tmp_path / "tb"
    r = run_tv([*helper("burn.py"), "1.5"], "--tensorboard", str(logdir))
    assert r.proc.returncode == 0, r.proc.stderr
    return r, logdir


def test_event_file_name_and_first_record(tb_run):
    r, logdir = tb_run
    files = event_files(logdir)
    assert len(files) == 1
    name = os.path.basename(files[0])
    m = re.fullmatch(r"events\.out\.tfevents\.(\d{10})\.(.+)\.(\d+)\.(\d+)", name)
    assert m, name
    assert m.group(2) == socket.gethostname()
    assert abs(int(m.group(1)) - r.meta["start_t"]) < 2
    data = open(files[0], "rb").read()
    assert data[12] == 0x09 and b"brain.Event:2" in data[:60]
    acc = load(os.path.dirname(files[0]))
    assert acc.file_version == 2.0


def test_scalars_match_samples_jsonl(tb_run):
    r, logdir = tb_run
    acc = load(logdir / "system")
    tags = acc.Tags()["scalars"]
    for tag in ("system/cpu_util_ratio", "system/cpu_util_ratio_max", "system/memory_used_mib",
                "job/cpu_cores", "job/memory_mib", "job/memory_mib_max", "job/rss_mib",
                "job/processes"):
        assert tag in tags, tags
    assert not any("_bytes" in t and "per_second" not in t for t in tags), tags
    rows = r.rows
    mem = acc.Scalars("job/memory_mib")
    assert len(mem) == len(rows)
    for event, row in zip(mem, rows):
        assert event.value == pytest.approx(row["job"]["memory_bytes"] / 2**20, rel=1e-6)
        assert event.wall_time == pytest.approx(row["t"], abs=1e-3)
    peak = acc.Scalars("job/memory_mib_max")
    assert [e.value for e in peak] == pytest.approx([row["job"]["memory_bytes_max"] / 2**20 for row in rows])
    util = [e.value for e in acc.Scalars("system/cpu_util_ratio")]
    assert all(0 <= v <= 1 for v in util)
    steps = [e.step for e in acc.Scalars("job/cpu_cores")]
    assert steps == sorted(set(steps))
    # Seconds since start at whole intervals of 1 s.
    assert steps == [round(row["elapsed_s"]) for row in rows[:-1]] + steps[-1:]
    assert steps[-1] == pytest.approx(rows[-1]["elapsed_s"], abs=1)


def test_tbparse_reads_the_scalars(tb_run):
    tbparse = pytest.importorskip("tbparse")
    r, logdir = tb_run
    df = tbparse.SummaryReader(str(logdir)).scalars
    assert set(df["tag"]) >= {"job/memory_mib", "system/cpu_util_ratio"}
    cores = df[df["tag"] == "job/cpu_cores"]
    assert len(cores) == len(r.rows)
    assert list(cores["value"]) == pytest.approx([row["job"]["cpu_cores"] for row in r.rows], abs=1e-4)


def test_file_cut_mid_record_keeps_earlier_records(tb_run, tmp_path):
    tbparse = pytest.importorskip("tbparse")
    _, logdir = tb_run
    src = event_files(logdir)[0]
    full = len(load(os.path.dirname(src)).Scalars("job/cpu_cores"))
    cut_dir = tmp_path / "cut" / "system"
    cut_dir.mkdir(parents=True)
    data = open(src, "rb").read()
    (cut_dir / os.path.basename(src)).write_bytes(data[: len(data) - 20])
    cut = load(cut_dir).Scalars("job/cpu_cores")
    assert len(cut) == full - 1
    df = tbparse.SummaryReader(str(cut_dir)).scalars
    assert len(df[df["tag"] == "job/cpu_cores"]) == full - 1


def test_second_run_starts_a_new_file(tb_run, run_tv):
    r, logdir = tb_run
    first = event_files(logdir)
    before = open(first[0], "rb").read()
    r2 = run_tv(["sleep", "1.2"], "--tensorboard", str(logdir), name="again")
    assert r2.proc.returncode == 0, r2.proc.stderr
    files = event_files(logdir)
    assert len(files) == 2
    assert open(first[0], "rb").read() == before


def test_unwritable_log_dir_fails_before_the_child_starts(tv, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    marker = tmp_path / "child-ran"
    proc = subprocess.run([tv, "run", "--out", str(tmp_path / "run"), "--tensorboard", str(blocker),
                           "--", "touch", str(marker)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "--tensorboard" in proc.stderr and str(blocker) in proc.stderr
    assert not marker.exists()
    assert not (tmp_path / "run").exists()


def test_a_full_disk_is_said_once_and_the_run_goes_on(tv, tmp_path):
    import resource
    import signal

    def small_files():
        # Files may not grow past 4 KiB: writes fail with EFBIG, as on a full disk.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    logdir = tmp_path / "tb"
    proc = subprocess.run([tv, "run", "--quiet", "--interval", "0.2", "--out", str(tmp_path / "run"),
                           "--tensorboard", str(logdir), "--", "sh", "-c", "sleep 2; exit 3"],
                          capture_output=True, text=True, timeout=60, preexec_fn=small_files)
    assert proc.returncode == 3, proc.stderr
    files = event_files(logdir)
    said = [line for line in proc.stderr.splitlines() if files[0] in line]
    assert len(said) == 1 and "monitoring goes on" in said[0], proc.stderr
    assert os.path.getsize(files[0]) == 4096
    assert len(load(os.path.dirname(files[0])).Scalars("job/cpu_cores")) >= 1
    # The summary cannot be written either, and says why; a size limit does not
    # pass with time, so the run's end does not wait for space as on ENOSPC.
    assert "summary.json: File too large" in proc.stderr, proc.stderr
    assert "waiting up to" not in proc.stderr


MARKERS = os.path.join(os.path.dirname(__file__), "helpers", "markers_script.py")
PY_ENV = {"PYTHONPATH": os.path.join(os.path.dirname(__file__), "..", "..", "python")}


def test_with_step_markers_the_step_is_the_trainings_global_step(run_tv, tmp_path):
    logdir = tmp_path / "tb"
    r = run_tv([sys.executable, MARKERS, "--steps", "40"], "--interval", "0.25",
               "--tensorboard", str(logdir), env=PY_ENV)
    assert r.proc.returncode == 0, r.proc.stderr
    given = [row["training"]["step"] for row in r.rows if "step" in row.get("training", {})]
    assert given and given[-1] == 119  # 3 epochs of 40 steps, numbered from 0
    steps = [e.step for e in load(logdir / "system").Scalars("job/cpu_cores")]
    assert steps == sorted(set(steps))
    on_training_axis = [s for s in steps if s >= min(given)]
    # Every row written once steps came sits at a step the training gave,
    # rows where the step stood still (evaluation) are left out.
    assert len(on_training_axis) >= 4 and set(on_training_axis) <= set(given), (steps, given)
    assert steps[-1] == 119


def test_a_monitors_log_dir_under_run_gets_the_system_scalars(run_tv, tmp_path):
    logdir = tmp_path / "logs"
    script = ("import time, trainvitals\n"
              f"with trainvitals.monitor(tensorboard={str(logdir)!r}) as m:\n"
              "    for s in range(30):\n"
              "        time.sleep(0.05)\n"
              "        m.step(s)\n")
    r = run_tv([sys.executable, "-c", script], "--interval", "0.25", env=PY_ENV)
    assert r.proc.returncode == 0, r.proc.stderr
    assert f"trainvitals: TensorBoard system scalars go to {logdir}/system too" in r.proc.stderr
    acc = load(logdir / "system")
    assert "job/cpu_cores" in acc.Tags()["scalars"]
    assert max(e.step for e in acc.Scalars("job/cpu_cores")) == 29
    assert not (tmp_path / "run" / "system").exists()
    assert any(e["type"] == "tensorboard_log_dir" and e["log_dir"] == str(logdir) for e in r.events)

    # --tensorboard elsewhere wins, and one line says so.
    other = tmp_path / "given"
    r = run_tv([sys.executable, "-c", script.replace(str(logdir), str(tmp_path / "logs2"))],
               "--tensorboard", str(other), env=PY_ENV, name="given")
    assert r.proc.returncode == 0, r.proc.stderr
    said = [line for line in r.proc.stderr.splitlines() if line.startswith("trainvitals: TensorBoard")]
    assert said == [f"trainvitals: TensorBoard system scalars go to {other} (--tensorboard), not "
                    f"also to the training's log_dir {tmp_path / 'logs2'}"], r.proc.stderr
    assert not (tmp_path / "logs2" / "system").exists()


def test_keras_log_dir_under_run_lines_up_with_kerass_own_curves(run_tv, tmp_path):
    pytest.importorskip("keras")
    tbparse = pytest.importorskip("tbparse")
    logdir = tmp_path / "logs"
    script = (
        "import numpy as np, keras\n"
        "from trainvitals.keras import VitalsCallback\n"
        "x = np.random.rand(640, 8).astype('float32'); y = x.sum(axis=1, keepdims=True)\n"
        "m = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation='relu'), keras.layers.Dense(1)])\n"
        "m.compile('adam', 'mse')\n"
        "def slow(batch, logs):\n"
        "    import time; time.sleep(0.02)\n"
        f"m.fit(x, y, epochs=3, batch_size=32, verbose=0, callbacks=[VitalsCallback(log_dir={str(logdir)!r}),"
        f" keras.callbacks.TensorBoard({str(logdir)!r}, update_freq=5),"
        " keras.callbacks.LambdaCallback(on_train_batch_end=slow)])\n")
    r = run_tv([sys.executable, "-c", script], "--interval", "0.25", env=PY_ENV, timeout=300)
    assert r.proc.returncode == 0, r.proc.stderr
    assert f"TensorBoard system scalars go to {logdir}/system too" in r.proc.stderr
    reader = tbparse.SummaryReader(str(logdir), extra_columns={"dir_name"})
    df = reader.scalars
    system = df[(df["dir_name"] == "system") & (df["tag"] == "job/cpu_cores")]
    keras_batches = reader.tensors  # Keras writes TF2 tensor summaries
    keras_batches = keras_batches[keras_batches["tag"] == "batch_loss"]
    assert len(system) >= 4 and len(keras_batches) > 0, (df, reader.tensors)
    # Both on the training's step axis: 3 epochs of 20 batches, the last at 60.
    assert list(keras_batches["step"]) == list(range(5, 61, 5))
    steps = list(system["step"])
    assert steps == sorted(set(steps)) and steps[-1] == 60, steps
