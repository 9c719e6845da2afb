"""Grows its memory by 8 MiB a second (1 MiB every 1/8 s, every page touched)
until the kernel kills it; with --kill-at RATIO it stops once its memory
cgroup's charge reaches RATIO of the cgroup's limit, holds it for --hold
seconds and then kills itself with SIGKILL (as an OOM killer would)."""
import argparse
import os
import signal
import time

MIB = 1 << 20


def cgroup_dir():
    for line in open("/proc/self/cgroup"):
        _, controllers, path = line.rstrip("\n").split(":", 2)
        if "memory" in controllers.split(","):
            return "/sys/fs/cgroup/memory" + path
    raise SystemExit("no v1 memory cgroup")


def read_int(path):
    with open(path) as f:
        return int(f.read())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--kill-at", type=float)
    p.add_argument("--hold", type=float, default=2.0)
    p.add_argument("--mib-per-s", type=float, default=8)
    args = p.parse_args()
    held = []
    pause = 1 / args.mib_per_s
    limit = read_int(os.path.join(cgroup_dir(), "memory.limit_in_bytes")) if args.kill_at else 0
    while True:
        if args.kill_at:
            usage = read_int(os.path.join(cgroup_dir(), "memory.usage_in_bytes"))
            if usage >= args.kill_at * limit:
                time.sleep(args.hold)
                os.kill(os.getpid(), signal.SIGKILL)
        held.append(b"\x01" * MIB)
        time.sleep(pause)


if __name__ == "__main__":
    main()
