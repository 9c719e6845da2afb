"""The Python API as a user meets it: lazy framework submodules, epochs and
phases as plain calls or context managers, and a step() that never raises."""
import json
import re
import subprocess
import sys
import textwrap

import pytest

from test_frameworks import env

FRAMEWORKS = ("tensorflow", "keras", "paddle", "torch", "lightning", "pytorch_lightning", "jax")


def python(code, *args, timeout=120):
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
                          env=env(), capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc


def test_import_trainvitals_imports_no_framework():
    proc = python(f"""
        import sys, trainvitals
        print(sorted(m for m in {FRAMEWORKS!r} if m in sys.modules))
        print("keras" in dir(trainvitals), "torch" in dir(trainvitals))
        """)
    assert proc.stdout.splitlines() == ["[]", "True True"]


def test_framework_submodules_load_on_first_attribute_use():
    proc = python("""
        import trainvitals
        callback = trainvitals.keras.VitalsCallback()
        print(type(callback).__name__, callback.monitor.framework)
        print(trainvitals.torch.monitor().framework)
        try:
            trainvitals.no_such_thing
        except AttributeError as e:
            print("AttributeError:", e)
        """)
    lines = proc.stdout.splitlines()
    assert lines[0] == "VitalsCallback keras"
    assert lines[1] == "torch"
    assert lines[2] == "AttributeError: module 'trainvitals' has no attribute 'no_such_thing'"


def test_epoch_and_phase_as_plain_calls_begin_at_the_call(tmp_path):
    """m.epoch(e) and m.phase(name) written as plain calls, as the README's table
    shows them: a new epoch ends the previous, a new phase the previous, close()
    what is open."""
    out = tmp_path / "run"
    python("""
        import sys, time, trainvitals
        m = trainvitals.monitor(out=sys.argv[1], interval=0.2, quiet=True)
        for epoch in range(3):
            # Before m.epoch(): it belongs to the epoch still open and ends with it;
            # the new epoch's time outside a phase counts as training all the same.
            m.phase("train")
            m.epoch(epoch)
            for step in range(5):
                time.sleep(0.02)
                m.step()
            m.phase("eval")
            time.sleep(0.1)
        m.close()
        """, out)
    summary = json.loads((out / "summary.json").read_text())
    epochs = summary["epochs"]
    assert [(e["epoch"], e["steps"], e.get("complete", True)) for e in epochs] == \
        [(0, 5, True), (1, 5, True), (2, 5, True)], epochs
    phases = summary["phases"]
    assert phases["train"]["count"] == 3 and phases["eval"]["count"] == 3, phases
    assert phases["eval"]["duration_s"] >= 0.25, phases
    assert phases["train"]["duration_s"] >= 0.25, phases


# The README's loop, its epochs and phases as plain calls (or `with m.epoch(e):`),
# and the ways a script ends. argv: form ("plain" or "with"), the step call
# ("step()" or "step(n)"), whether each epoch says m.phase("train"), how the
# script ends ("normal", "exit0", "exit3", "raise": inside epoch 1's training),
# and alone the run directory. Each epoch: 4 steps of 0.1 s, then 0.2 s of eval.
LOOP = """
import sys, time, trainvitals
form, step_call, train_phase, end = sys.argv[1:5]
m = trainvitals.monitor(**(dict(out=sys.argv[5], interval=0.2, quiet=True)
                           if len(sys.argv) > 5 else {}))

def epoch_body(e):
    if train_phase == "train":
        m.phase("train")
    for i in range(4):
        time.sleep(0.1)
        m.step(i) if step_call == "step(n)" else m.step()
    if end == "raise" and e == 1:
        raise RuntimeError("boom")
    m.phase("eval")
    time.sleep(0.2)

for e in range(2):
    if form == "with":
        with m.epoch(e):
            epoch_body(e)
    else:
        m.epoch(e)
        epoch_body(e)
if end == "exit0":
    sys.exit(0)
if end == "exit3":
    sys.exit(3)
"""
EXIT_CODES = {"normal": 0, "exit0": 0, "exit3": 3, "raise": 1}


def check_loop(summary, end):
    """Each epoch its own 4 steps; every epoch complete but one an exception cut;
    0.4 s of training and 0.2 s of eval an epoch, eval never counted as training
    nor training as eval. The eval's upper bounds stay under what one epoch's
    0.4 s of training counted as eval would make, and leave the rest to the
    script's own end (interpreter shutdown on a loaded machine)."""
    epochs = [(e["epoch"], e["steps"], e.get("complete", True)) for e in summary["epochs"]]
    phases = summary["phases"]
    train, evals = phases["train"], phases["eval"]
    assert train["count"] == 2, phases
    assert train["duration_s"] >= 0.7, phases  # 2 x 0.4 s
    if end == "raise":
        # The epoch the exception cut stays open: not complete, with the 4 steps
        # it took before the exception.
        assert epochs == [(0, 4, True), (1, 4, False)], epochs
        assert evals["count"] == 1 and 0.15 <= evals["duration_s"] < 0.55, phases
    else:
        assert epochs == [(0, 4, True), (1, 4, True)], epochs
        assert evals["count"] == 2 and 0.35 <= evals["duration_s"] < 0.75, phases


@pytest.mark.parametrize("form,step_call,train_phase,end", [
    ("plain", "step()", "train", "normal"),  # the README's loop, word for word
    ("plain", "step(n)", "-", "normal"),  # no m.phase("train"): epoch 1 trains, not evals
    ("plain", "step()", "-", "exit0"),
    ("plain", "step(n)", "train", "exit3"),
    ("plain", "step()", "train", "raise"),
    ("with", "step()", "-", "normal"),  # the same epochs as the plain calls
    ("with", "step(n)", "train", "raise"),
])
def test_plain_epoch_and_phase_calls_under_run_end_with_the_script(
        run_tv, tmp_path, form, step_call, train_phase, end):
    """Under `trainvitals run`, no close(): the script's end (normally, sys.exit,
    an exception) ends the epoch and phases it left open, as docs/markers.md says;
    a new epoch ends the phase the previous one left open."""
    script = tmp_path / "loop.py"
    script.write_text(LOOP)
    r = run_tv([sys.executable, str(script), form, step_call, train_phase, end],
               "--interval", "0.2", "--quiet", env=env())
    assert r.proc.returncode == EXIT_CODES[end], r.proc.stderr[-4000:]
    check_loop(r.summary, end)
    if end == "raise":
        assert r.summary["exception"]["type"] == "RuntimeError", r.summary.get("exception")
    marks = [(e["type"], e.get("phase", e.get("epoch"))) for e in r.events
             if e["type"] in ("phase_begin", "phase_end", "epoch_begin", "epoch_end")]
    # Each epoch's eval ends before the epoch does; the run's end ends the last.
    for i, mark in enumerate(marks):
        if mark[0] == "epoch_end":
            assert marks[i - 1] == ("phase_end", "eval"), marks
    assert marks.count(("phase_begin", "eval")) == marks.count(("phase_end", "eval")), marks
    assert [m for m in marks if m[0] == "epoch_end"] == \
        [("epoch_end", 0)] + ([] if end == "raise" else [("epoch_end", 1)]), marks


@pytest.mark.parametrize("end", ["normal", "exit3", "raise"])
def test_plain_epoch_and_phase_calls_alone_end_with_the_script(tmp_path, end):
    """The same loop without `trainvitals run`: the monitor's own run ends what is
    open at the interpreter's exit, before its summary is written."""
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-c", LOOP, "plain", "step()", "-", end, str(out)],
                          env=env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == EXIT_CODES[end], proc.stderr[-4000:]
    check_loop(json.loads((out / "summary.json").read_text()), end)


def test_epoch_and_phase_as_context_managers_and_a_misuse_warns_once(tmp_path):
    out = tmp_path / "run"
    proc = python("""
        import sys, time, warnings, trainvitals
        warnings.simplefilter("always")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with trainvitals.monitor(out=sys.argv[1], interval=0.2, quiet=True) as m:
                for epoch in range(2):
                    with m.phase("train"), m.epoch(epoch):
                        with m.phase("eval"):
                            time.sleep(0.05)
                        m.step()
                for _ in range(2):  # the same misuses twice: each warns once
                    m.phase_end("nothing-open")
                    m.epoch("three")
                    with m.epoch(5):
                        m.epoch(6)  # ends epoch 5 inside its own block
            m.close()
        for w in caught:
            print(w.category.__name__, w.message)
        """, out)
    warned = proc.stdout.splitlines()
    assert len(warned) == 3, warned
    assert all(w.startswith("UsageWarning trainvitals: ") for w in warned), warned
    assert any("phase_end('nothing-open')" in w for w in warned)
    assert any("epoch('three')" in w for w in warned)
    assert any("epoch(5)" in w and "ended before its `with` block" in w for w in warned)
    summary = json.loads((out / "summary.json").read_text())
    # epochs 0 and 1, then 5 and 6 once, then 7 and 8 (the repeated 5 and 6 continue
    # the record instead of repeating numbers); train nests eval.
    assert [e["epoch"] for e in summary["epochs"]] == [0, 1, 5, 6, 7, 8]
    assert summary["phases"]["eval"]["count"] == 2
    assert summary["phases"]["train"]["count"] == 2


def test_step_with_a_bad_argument_never_raises_into_the_loop(tmp_path):
    out = tmp_path / "run"
    proc = python("""
        import sys, warnings, trainvitals
        import numpy as np
        warnings.simplefilter("always")
        m = trainvitals.monitor(out=sys.argv[1], interval=0.2, quiet=True)
        odd = [None, "seven", float("nan"), float("inf"), 10**30, -(10**30), object(),
               np.array([1, 2]), np.int64(4), 3.0, True, [1], b"x"]
        for value in odd:
            m.step(value)
        print("steps taken", len(odd))
        m.close()
        """, out)
    assert "steps taken 13" in proc.stdout
    assert proc.stderr.count("UsageWarning") == 1, proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["training"]["steps"] == 13, summary.get("training")


def test_device_uuids_are_written_as_nvml_writes_them_and_never_raise():
    """The allocator figures' UUID (docs/markers.md): the CUDA driver's 16 bytes or
    a framework's bare text, in NVML's form; without a CUDA driver, None."""
    proc = python("""
        import ctypes
        from trainvitals import _gpu_ids
        print(_gpu_ids.format_uuid(bytes(range(16))))
        print(_gpu_ids.normal_uuid("5b4f0e1a-0000-1111-2222-333344445555"))
        print(_gpu_ids.normal_uuid("MIG-5b4f0e1a-0000-1111-2222-333344445555"))
        print(_gpu_ids.normal_uuid(""))
        try:
            ctypes.CDLL("libcuda.so.1")
            print("driver")
        except OSError:
            print("no driver")
        print(_gpu_ids.cuda_uuid(0), _gpu_ids.cuda_uuid(10_000))
        """)
    lines = proc.stdout.splitlines()
    assert lines[:4] == [
        "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f",
        "GPU-5b4f0e1a-0000-1111-2222-333344445555",
        "MIG-5b4f0e1a-0000-1111-2222-333344445555",
        "None",
    ]
    if lines[4] == "no driver":
        assert lines[5] == "None None"
    else:  # a GPU machine: device 0 has its UUID, a device that does not exist none
        assert re.fullmatch(r"GPU-[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12} None", lines[5])
