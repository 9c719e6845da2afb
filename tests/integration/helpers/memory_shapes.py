"""A process whose memory has a planted shape for a planted time.

usage: memory_shapes.py SHAPE SECONDS [RATE_BYTES_PER_S]
  leak      grows RATE bytes a second (8 MB/s by default) and never gives back
  flat      holds 200 MB
  sawtooth  holds 200 MB, fills a 300 MB buffer over 4 s and frees it for 2 s,
            again and again; a cache fills to 150 MB in its first 10 s and is
            held. Each cycle gives its buffer back for its 2 s however slowly
            the process is scheduled (a starved loop skips no trough).
Prints the start time and the bytes grown as JSON on its last line."""
import json
import mmap
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


def grow(chunks, want, make=bytearray):
    """Adds touched (resident) chunks to `chunks` until they hold `want` bytes."""
    grown = sum(len(b) for b in chunks)
    if want > grown:
        chunk = make(want - grown)
        for i in range(0, len(chunk), 4096):
            chunk[i] = 1
        chunks.append(chunk)


while (now := time.time()) - start < seconds:
    if shape == "leak":
        grow(held, int(rate * (now - start)))
    elif shape == "sawtooth":
        buffer = []
        while (t := time.time() - now) < 4:
            if time.time() - start < 10:
                grow(cache, int((time.time() - start) * 15 * MB))
            # Its own mappings, unmapped when dropped (malloc may keep freed
            # chunks of a few MB resident).
            grow(buffer, int(300 * MB * t / 4), lambda n: mmap.mmap(-1, n))
            time.sleep(0.05)
        buffer = None  # given back
        time.sleep(2)
        continue
    time.sleep(0.05)
print(json.dumps({"start_t": start, "grown_bytes": sum(len(b) for b in held)}))
