"""Burns one core for the given seconds, after an idle second. Prints the share
of a core it really got while burning ("cpu_ratio R"), which is below 1 when
the machine is busy."""
import sys
import time

seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 4.0
time.sleep(1.0)
start, cpu0 = time.monotonic(), time.process_time()
end = start + seconds
x = 0
while time.monotonic() < end:
    x += 1
print("cpu_ratio", (time.process_time() - cpu0) / (time.monotonic() - start), flush=True)
