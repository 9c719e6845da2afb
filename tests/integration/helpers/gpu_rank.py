"""A rank that trains on "its" GPU, which its own CUDA_VISIBLE_DEVICES calls
device 0. It reports made-up allocator figures for device 0 with the UUID its
framework would give (argv[1]) and `argv[2]` allocated bytes."""
import sys
import time

import trainvitals

uuid, allocated = sys.argv[1], float(sys.argv[2])


def allocator():
    return [{"device": 0, "uuid": uuid, "allocated_bytes": allocated,
             "peak_allocated_bytes": allocated + 1e6, "reserved_bytes": allocated + 2e6}]


with trainvitals.monitor(allocator=allocator) as m:
    for step in range(60):
        time.sleep(0.05)
        m.step(step)
