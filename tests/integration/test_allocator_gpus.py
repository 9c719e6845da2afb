"""Allocator figures land on the GPU the rank really uses, by the device's UUID
(fake NVML driver, two GPUs): with a per-rank CUDA_VISIBLE_DEVICES every rank
calls its GPU device 0."""
import sys

from conftest import HELPERS, ROOT
from test_gpus import gpu_rows, gpu_run  # noqa: F401 (gpu_run: a fixture)

RANKS = f"""
import os, subprocess, sys
ranks = [("0", "GPU-0a0a0a0a-two-0", "1e9"),  # NVML's form
         ("1", "1B1B1B1B-TWO-1", "3e9")]      # bare, as torch's device properties print it
procs = [subprocess.Popen([sys.executable, {str(HELPERS / "gpu_rank.py")!r}, uuid, allocated],
                          env={{**os.environ, "RANK": str(rank), "CUDA_VISIBLE_DEVICES": gpu}})
         for rank, (gpu, uuid, allocated) in enumerate(ranks)]
sys.exit(max(p.wait() for p in procs))
"""


def test_two_ranks_each_on_its_own_visible_gpu_land_on_the_right_gpus(gpu_run):
    r = gpu_run("two_gpus.json", command=[sys.executable, "-c", RANKS],
                extra_env={"PYTHONPATH": str(ROOT / "python")})
    g0 = [g for g in gpu_rows(r, 0) if "allocator_allocated_bytes" in g]
    g1 = [g for g in gpu_rows(r, 1) if "allocator_allocated_bytes" in g]
    assert g0 and g1, "a GPU has no allocator figures"
    assert {g["allocator_allocated_bytes"] for g in g0} == {1e9}, g0
    assert {g["allocator_allocated_bytes"] for g in g1} == {3e9}, g1
    assert {g["allocator_reserved_bytes"] for g in g1} == {3e9 + 2e6}, g1
