"""Nodes of a fleet on one machine, for root: each node a network and a PID
namespace of its own, so its agent sees only its own processes and listens on
its own address, joined to this namespace by a veth pair (this side
10.77.K.1/24, the node's side eth0 10.77.K.2/24). Everything a node holds dies
with its namespace's first process: its processes, its veth pair."""
import ctypes
import os
import shutil
import signal
import subprocess

import psutil
import pytest

from prom_services import wait_for

SUBNET = "10.77"


def skip_reason():
    """Why this machine cannot make the nodes, or None."""
    missing = [b for b in ("unshare", "nsenter", "ip") if not shutil.which(b)]
    if missing:
        return f"missing {', '.join(missing)} (util-linux, iproute2)"
    if os.geteuid() != 0:
        return "namespaces and veth pairs are made by root"
    return None


def die_with_parent():
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # 1 is PR_SET_PDEATHSIG


def free_subnets(count):
    """Third octets of 10.77.K.0/24 networks no interface or route of this
    namespace uses yet."""
    used = subprocess.run(["ip", "-o", "-4", "addr"], capture_output=True, text=True).stdout
    used += subprocess.run(["ip", "-4", "route"], capture_output=True, text=True).stdout
    start = os.getpid() % 200
    free = [k % 250 + 1 for k in range(start, start + 250)
            if f"{SUBNET}.{k % 250 + 1}." not in used]
    if len(free) < count:
        pytest.skip(f"no {count} free networks under {SUBNET}.0.0/16")
    return free[:count]


class Node:
    """One node: `init` is the first process of its namespaces (host PID
    `pid`); `run` starts a process inside them."""

    def __init__(self, name, octet, tmp):
        self.name, self.tmp = name, tmp
        self.address = f"{SUBNET}.{octet}.2"
        self.procs = []
        # --kill-child: should unshare die, so does the namespace's first process,
        # and with it every process of the node; unshare dies with the test.
        self.init = subprocess.Popen(["unshare", "--net", "--pid", "--fork", "--mount-proc",
                                      "--kill-child", "sleep", "infinity"],
                                     preexec_fn=die_with_parent)

        def first():
            children = psutil.Process(self.init.pid).children()
            # Its own /proc is mounted before it becomes `sleep`.
            return children[0].pid if children and children[0].name() == "sleep" else None

        try:
            self.pid = wait_for(first, timeout=10, what=f"{name}'s namespaces")
            outside = f"tvf{os.getpid() % 100000}{name[-1]}"
            self._ip("link", "add", outside, "type", "veth", "peer", "name", "eth0", "netns",
                     str(self.pid))
            self._ip("addr", "add", f"{SUBNET}.{octet}.1/24", "dev", outside)
            self._ip("link", "set", outside, "up")
            for args in (("link", "set", "lo", "up"),
                         ("addr", "add", f"{self.address}/24", "dev", "eth0"),
                         ("link", "set", "eth0", "up")):
                self._ip(*args, inside=True)
        except BaseException:
            self.stop()
            raise

    def _ip(self, *args, inside=False):
        enter = ["nsenter", "-t", str(self.pid), "-n"] if inside else []
        subprocess.run([*enter, "ip", *args], check=True, capture_output=True)

    def run(self, args, **kwargs):
        """Popen of `args` inside the node's PID, network and mount namespaces
        (so it sees the node's /proc); stopped with the node."""
        proc = subprocess.Popen(["nsenter", "-t", str(self.pid), "-p", "-n", "-m", "--", *args],
                                **kwargs)
        self.procs.append(proc)
        return proc

    def kill_inside(self, proc):
        """Kills what `proc` (a `run`) started: the process nsenter waits for."""
        for child in psutil.Process(proc.pid).children():
            child.kill()
        proc.wait(timeout=10)

    def stop(self):
        # unshare ignores SIGTERM while it waits; killed, it takes the first
        # process along (--kill-child), and the kernel the rest of the node.
        self.init.kill()
        self.init.wait()
        for proc in self.procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
