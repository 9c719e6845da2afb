"""Moves itself into the given cgroup directories (one a hierarchy), then runs
the command after "--" in its place, so the command starts and allocates
inside them, as a scheduler starts a job's processes."""
import os
import sys

split = sys.argv.index("--")
for directory in sys.argv[1:split]:
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "cgroup.procs"), "w") as f:
        f.write(str(os.getpid()))
command = sys.argv[split + 1:]
os.execvp(command[0], command)
