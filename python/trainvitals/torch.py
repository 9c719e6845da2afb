"""trainvitals for a plain PyTorch loop: the caching allocator's figures per step.

    import trainvitals.torch

    with trainvitals.torch.monitor() as m:
        for epoch in range(epochs):
            with m.epoch(epoch), m.phase("train"):
                for step, batch in enumerate(m.data(loader)):
                    ...
                    m.step()

``m.data(loader)`` yields what ``loader`` yields and times each ``next()`` as
the process's wait for its next batch (``training.data_wait_ratio``); it
works with any iterable.

``m.epoch(e)`` and ``m.phase(name)`` also work as plain calls: an epoch lasts
until the next begins (or the script ends), a phase until the next one begun
the same way or the end of the epoch it began in.

``trainvitals.torch.monitor(total_epochs=N, on_oom_risk="stop")``: when
trainvitals finds the memory at risk, ``m.should_stop`` becomes True (check it
in the loop); ``on_oom_risk="checkpoint", checkpoint=save`` calls ``save()``; a
function as ``on_oom_risk`` receives the forecast. A risk on a GPU leaves
``torch.cuda.memory_summary()`` in the run directory (docs/markers.md). An
alert rule with ``stop = true`` (``trainvitals run --alerts``) also makes
``m.should_stop`` True, whatever ``on_oom_risk`` says.

The rank comes from the RANK environment variable (torchrun sets it) unless
``rank=`` is given. Other keyword arguments are monitor options (``out=``,
``interval=``, ``quiet=``...), used when no ``trainvitals run`` supervises.
"""

from __future__ import annotations

import sys
from typing import Dict, List

from . import Monitor
from ._gpu_ids import cuda_uuid, normal_uuid

__all__ = ["allocator", "monitor"]

# (our key, torch.cuda.memory_stats key)
_STATS = (
    ("allocated_bytes", "allocated_bytes.all.current"),
    ("peak_allocated_bytes", "allocated_bytes.all.peak"),
    ("reserved_bytes", "reserved_bytes.all.current"),
    ("peak_reserved_bytes", "reserved_bytes.all.peak"),
    ("active_bytes", "active_bytes.all.current"),
    ("num_ooms", "num_ooms"),
    ("alloc_retries", "num_alloc_retries"),
)


def allocator() -> List[Dict[str, float]]:
    """torch.cuda.memory_stats for each visible device; [] without CUDA."""
    torch = sys.modules.get("torch")
    if torch is None:
        import torch  # noqa: F811 - the script uses it anyway
    if not torch.cuda.is_available():
        return []
    devices = []
    for index in range(torch.cuda.device_count()):
        stats = torch.cuda.memory_stats(index) if torch.cuda.is_initialized() else {}
        figures = {"device": index}
        uuid = device_uuid(torch, index)
        if uuid:
            figures["uuid"] = uuid
        for ours, theirs in _STATS:
            if theirs in stats:
                figures[ours] = float(stats[theirs])
        devices.append(figures)
    return devices


def device_uuid(torch, index: int):
    """The UUID of torch's CUDA device `index`: its properties' `uuid` where torch
    has it (2.x), else the CUDA driver's answer (torch 1.13 has none)."""
    try:
        uuid = normal_uuid(getattr(torch.cuda.get_device_properties(index), "uuid", None))
    except Exception:
        uuid = None
    return uuid or cuda_uuid(index)


def monitor(**options) -> Monitor:
    """A Monitor for a PyTorch training loop, with the CUDA allocator's figures."""
    options.setdefault("framework", "torch")
    options.setdefault("allocator", allocator)
    return Monitor(**options)
