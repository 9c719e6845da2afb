"""A job's work: holds MIB of memory it wrote to, burns about SHARE of one core
in 100 ms slices, and prints "ready" once the memory is in place. Runs until
killed."""
import sys
import time

mib, share = int(sys.argv[1]), float(sys.argv[2])
block = bytearray(mib << 20)
for i in range(0, len(block), 4096):
    block[i] = 1
print("ready", flush=True)
while True:
    end = time.monotonic() + 0.1 * share
    while time.monotonic() < end:
        pass
    time.sleep(0.1 * (1 - share))
