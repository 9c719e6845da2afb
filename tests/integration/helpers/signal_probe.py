"""Writes the name of each forwarded signal it receives to a file, then exits 0 on SIGTERM."""
import os
import signal
import sys
import time

log = sys.argv[1]


def note(sig, _frame):
    with open(log, "a") as f:
        f.write(signal.Signals(sig).name + "\n")
    if sig == signal.SIGTERM:
        sys.exit(0)


for s in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
    signal.signal(s, note)
with open(log + ".ready", "w") as f:
    f.write(str(os.getpid()))
while True:
    time.sleep(0.05)
