"""Profiles on request (docs/markers.md "Profiles").

When a finding opens (input-bound, low-gpu-util, cpu-bound, straggler) or
`trainvitals profile` asks, the monitor numbers a request in this process's
step slot; the next step() reads it and profiles the steps asked with the
framework's own profiler: torch.profiler (PyTorch, Lightning, a plain loop
that uses torch), tf.profiler (Keras), paddle.profiler (Paddle). The trace
goes to <run dir>/profiles/<reason>-<rank>-<step>/ and a `profile` marker
says so. Nothing here raises into the training.
"""
import json
import os
import socket
import sys
import time

from . import _run


def _torch_profiler(directory, steps):
    import torch
    from torch.profiler import ProfilerActivity, profile, schedule

    activities = [ProfilerActivity.CPU]
    if torch.cuda.is_available():
        activities.append(ProfilerActivity.CUDA)
    # TensorBoard's PyTorch profiler plugin reads <worker>.pt.trace.json.
    path = os.path.join(directory, f"{socket.gethostname()}_{os.getpid()}.pt.trace.json")
    # The first step under the profiler pays its start (seconds on a busy
    # machine): it is a warm-up, left out of the trace, as PyTorch advises.
    # A schedule also marks each step's range (ProfilerStep#N) in the trace.
    prof = profile(activities=activities,
                   schedule=schedule(wait=0, warmup=1, active=steps, repeat=1),
                   on_trace_ready=lambda p: p.export_chrome_trace(path))
    prof.start()
    return prof.step, prof.stop, 1


def _tf_profiler(directory, steps):
    import tensorflow as tf

    tf.profiler.experimental.start(directory)
    return (lambda: None), tf.profiler.experimental.stop, 0


def _paddle_profiler(directory, steps):
    import paddle
    from paddle import profiler

    targets = [profiler.ProfilerTarget.CPU]
    if paddle.device.is_compiled_with_cuda() and paddle.device.cuda.device_count() > 0:
        targets.append(profiler.ProfilerTarget.GPU)
    prof = profiler.Profiler(targets=targets,
                             on_trace_ready=profiler.export_chrome_tracing(directory))
    prof.start()
    return prof.step, prof.stop, 0


def _profiler_for(framework):
    """The framework's profiler starter; None when the process has none loaded."""
    if framework == "keras":
        return _tf_profiler if "tensorflow" in sys.modules else None
    if framework == "paddle":
        return _paddle_profiler if "paddle" in sys.modules else None
    return _torch_profiler if "torch" in sys.modules else None


class NoProfiler(RuntimeError):
    """This process has no profiler of its framework loaded."""


class Capture:
    """The profiler around this process's next `steps` steps (after the
    profiler's warm-up steps, where it has them)."""

    def __init__(self, client, request, framework, run_dir, rank):
        self.client = client
        self.reason = str(request.get("reason", "request"))
        self.id = str(request.get("id", ""))
        self.steps = max(1, int(request.get("steps", 20)))
        start = _profiler_for(framework)
        if start is None:
            raise NoProfiler(f"no profiler for {framework} in this process")
        self.dir = f"profiles/{self.reason}-{max(rank, 0)}-{client.steps}"
        path = os.path.join(run_dir, self.dir)
        os.makedirs(path, exist_ok=True)
        self.t0 = time.perf_counter()
        self._step, self._stop, self.warmup = start(path, self.steps)
        self.done = 0

    def step(self) -> bool:
        """One more step profiled; True once the capture is over."""
        self.done += 1
        if self.done < self.warmup + self.steps:
            self._step()
            return False
        if self.warmup:
            self._step()  # the schedule's last step: the trace is written
        self._stop()
        self.client.profiled(self.reason, self.id, self.dir, self.done - self.warmup,
                             time.perf_counter() - self.t0)
        return True

    def abandon(self) -> None:
        """A step of the capture failed: the profiler stops, nothing is said."""
        try:
            self._stop()
        except Exception:
            pass


def _take(client, framework, run_dir, rank):
    """A capture for the request that came, started; None when there is none."""
    text = client.request()
    if not text or not run_dir:
        return None
    try:
        request = json.loads(text)
        if request.get("what") != "profile":
            return None
        return Capture(client, request, framework, run_dir, rank)
    except NoProfiler as e:  # said when a person asked; a finding's ask passes quietly
        if request.get("reason") == "request":
            _run.say_once("profile", f"no profile taken: {e}")
        return None
    except Exception as e:  # never stop the training for a profile
        _run.say_once("profile", f"no profile taken: {type(e).__name__}: {e}")
        return None


def profile_next_steps(monitor, client, run_dir) -> None:
    """A profile was asked for: the monitor's next steps run under the profiler,
    through a step() of the instance's own, so steps cost nothing more otherwise."""
    if "step" in monitor.__dict__:
        return  # one capture at a time
    capture = _take(client, monitor.framework, run_dir, getattr(client, "rank", -1))
    if capture is None:
        return
    plain = type(monitor).step.__get__(monitor)

    def profiled_step(step=None):
        plain(step)
        try:
            over = capture.step()
        except Exception as e:
            over = True
            capture.abandon()
            _run.say_once("profile", f"profile cut short: {type(e).__name__}: {e}")
        if over:
            del monitor.step

    monitor.step = profiled_step
