"""A process whose memory has a planted shape for a planted time.

usage: memory_shapes.py SHAPE SECONDS [RATE_BYTES_PER_S]
  leak      grows RATE bytes a second (8 MB/s by default) and never gives back
  flat      holds 200 MB
  sawtooth  holds 200 MB, fills a 300 MB buffer over 4 s and frees it, again
            and again; a cache fills to 150 MB in its first 10 s and is held
Prints the start time and the bytes grown as JSON on its last line."""
import json
import sys
import time

shape = sys.argv[1]
seconds = float(sys.argv[2])
rate = float(sys.argv[3]) if len(sys.argv) > 3 else 8e6
MB = 1_000_000

base = bytearray(200 * MB)  # touched: resident
for i in range(0, len(base), 4096):
    base[i] = 1
held, cache = [], []
start = time.time()
buffer = None
while (now := time.time()) - start < seconds:
    t = now - start
    if shape == "leak":
        want = int(rate * t)
        grown = sum(len(b) for b in held)
        if want > grown:
            chunk = bytearray(want - grown)
            for i in range(0, len(chunk), 4096):
                chunk[i] = 1
            held.append(chunk)
    elif shape == "sawtooth":
        if t < 10 and len(cache) < int(t * 15):
            cache.append(b"\x01" * MB)
        phase = t % 6
        if phase < 4:
            size = int(300 * MB * phase / 4)
            buffer = bytearray(size)
            for i in range(0, size, 4096):
                buffer[i] = 1
        else:
            buffer = None
    time.sleep(0.05)
print(json.dumps({"start_t": start, "grown_bytes": sum(len(b) for b in held)}))
