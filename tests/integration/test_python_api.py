"""The Python API as a user meets it: lazy framework submodules, epochs and
phases as plain calls or context managers, and a step() that never raises."""
import json
import re
import subprocess
import sys
import textwrap

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
            m.phase("train")  # before the epoch: no time of the epoch is outside a phase
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
