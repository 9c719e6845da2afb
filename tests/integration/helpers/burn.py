"""Burns one core for the given seconds, after an idle second."""
import sys
import time

seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 4.0
time.sleep(1.0)
end = time.monotonic() + seconds
x = 0
while time.monotonic() < end:
    x += 1
