"""Nodes of one cluster on this machine, for root: each node a network, PID,
mount and UTS namespace of its own, with its own host name, so a process on it
sees only the node's processes, its own address and its own name.

The nodes reach each other through a switch: one more network namespace that
holds a bridge (`br0`) and, for each node, one end of a veth pair whose other
end is the node's `eth0` (node N at 10.77.K.N+2 on 10.77.K.0/24, K a network no
interface or route here uses). Nothing is made in this namespace: no
interface, no route, no forwarding; the machine is left as it was.
(fleet_nodes.py joins each node to this namespace instead, which lets this
namespace reach the nodes but not the nodes each other without turning on
forwarding here.) Everything a node holds dies with its namespace's first
process: its processes, its end of the veth pair; the switch dies with its one
process, and with it the bridge and the switch's ends."""
import subprocess
import time

import psutil
import pytest

from fleet_nodes import SUBNET, die_with_parent, free_subnets, skip_reason


def tail(text, lines=15):
    text = text.decode(errors="replace") if isinstance(text, bytes) else (text or "")
    return "\n".join(text.rstrip().splitlines()[-lines:])


def must(what, args, timeout=30):
    """Runs `args`; on failure fails the test with what it was for, the command
    and the end of its stderr."""
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"{what}: `{' '.join(args)}` still ran after {timeout} s; stderr:\n"
                    f"{tail(e.stderr)}", pytrace=False)
    except OSError as e:
        pytest.fail(f"{what}: `{' '.join(args)}` could not start: {e}", pytrace=False)
    if done.returncode != 0:
        pytest.fail(f"{what}: `{' '.join(args)}` exited {done.returncode}; stderr:\n"
                    f"{tail(done.stderr)}", pytrace=False)
    return done.stdout


def first_of(init, command, what, timeout=10):
    """The first process of the namespaces `init` (an unshare) makes, once it
    has become `command`: its host PID."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if init.poll() is not None:
            pytest.fail(f"{what}: `{' '.join(init.args)}` exited {init.returncode} before "
                        f"its namespaces were ready; stderr:\n{tail(init.stderr.read())}",
                        pytrace=False)
        try:
            if psutil.Process(init.pid).name() == command:  # unshare without --fork execs
                return init.pid
            children = psutil.Process(init.pid).children()
            if children and children[0].name() == command:
                return children[0].pid
        except psutil.Error:
            pass
        time.sleep(0.05)
    pytest.fail(f"{what}: `{' '.join(init.args)}` had no `{command}` after {timeout} s",
                pytrace=False)


class Switch:
    """A network namespace holding the bridge the nodes plug into."""

    def __init__(self, octet):
        self.octet = octet
        self.ports = 0
        self.init = subprocess.Popen(["unshare", "--net", "sleep", "infinity"],
                                     preexec_fn=die_with_parent, stderr=subprocess.PIPE)
        try:
            self.pid = first_of(self.init, "sleep", "the switch's network namespace")
            self.ip("making the switch's bridge", "link", "add", "br0", "type", "bridge")
            self.ip("bringing the switch's bridge up", "link", "set", "br0", "up")
        except BaseException:
            self.stop()
            raise

    def ip(self, what, *args):
        return must(what, ["nsenter", "-t", str(self.pid), "-n", "ip", *args])

    def plug(self, node):
        """A veth pair from a port of the bridge to the node's eth0."""
        port = f"port{self.ports}"
        self.ports += 1
        self.ip(f"{node.name}: making its veth pair", "link", "add", port, "type", "veth",
                "peer", "name", "eth0", "netns", str(node.pid))
        self.ip(f"{node.name}: plugging its veth into the bridge", "link", "set", port,
                "master", "br0")
        self.ip(f"{node.name}: bringing its bridge port up", "link", "set", port, "up")

    def stop(self):
        self.init.kill()
        self.init.wait()


class Node:
    """One node named `name` (its host name) at `address` on the switch's
    network; `run` starts a process on it."""

    def __init__(self, name, switch, index):
        self.name = name
        self.address = f"{SUBNET}.{switch.octet}.{index + 2}"
        self.procs = []
        # --kill-child: should unshare die, so does the namespace's first process,
        # and with it every process of the node; unshare dies with the test.
        self.init = subprocess.Popen(
            ["unshare", "--net", "--pid", "--uts", "--fork", "--mount-proc", "--kill-child",
             "sh", "-c", 'hostname "$0" && exec sleep infinity', name],
            preexec_fn=die_with_parent, stderr=subprocess.PIPE)
        try:
            self.pid = first_of(self.init, "sleep", f"{name}: its namespaces")
            switch.plug(self)
            for what, args in (("bringing lo up", ("link", "set", "lo", "up")),
                               ("addressing eth0", ("addr", "add", f"{self.address}/24", "dev",
                                                    "eth0")),
                               ("bringing eth0 up", ("link", "set", "eth0", "up"))):
                must(f"{name}: {what}", self.enter("-n") + ["ip", *args])
            seen = must(f"{name}: reading its host name", self.enter("-u") + ["hostname"])
            if seen.strip() != name:
                pytest.fail(f"{name}: its UTS namespace is named {seen.strip()!r}", pytrace=False)
        except BaseException:
            self.stop()
            raise

    def enter(self, *which):
        return ["nsenter", "-t", str(self.pid), *which, "--"]

    def run(self, args, **kwargs):
        """Popen of `args` inside every namespace of the node (its /proc, its
        name, its network), in `cwd` (nsenter would start it in /); stopped
        with the node."""
        where = [f"--wd={kwargs['cwd']}"] if kwargs.get("cwd") else []
        proc = subprocess.Popen(self.enter("-p", "-n", "-m", "-u", *where) + list(args), **kwargs)
        self.procs.append(proc)
        return proc

    def reaches(self, other, python, port=9):
        """Fails unless a TCP connection from this node to `other` is answered
        (refused counts: the other node's kernel answered)."""
        probe = ("import socket, sys\n"
                 "try:\n"
                 "    socket.create_connection((sys.argv[1], int(sys.argv[2])), 5).close()\n"
                 "except ConnectionRefusedError:\n"
                 "    pass\n")
        must(f"{self.name}: reaching {other.name} at {other.address}",
             self.enter("-n") + [python, "-c", probe, other.address, str(port)])

    def kill_all(self):
        """Kills every process of the node but its first (its namespaces stay)."""
        try:
            inside = psutil.Process(self.pid).children(recursive=True)
        except psutil.Error:
            return
        for proc in inside:
            try:
                proc.kill()
            except psutil.Error:
                pass

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


def make_nodes(names, python):
    """(switch, [Node]) for `names`, every node reaching every other; skips
    where this machine cannot make them."""
    if skip_reason():
        pytest.skip(skip_reason())
    switch = Switch(free_subnets(1)[0])
    nodes = []
    try:
        for index, name in enumerate(names):
            nodes.append(Node(name, switch, index))
        for a in nodes:
            for b in nodes:
                if a is not b:
                    a.reaches(b, python)
    except BaseException:
        for node in nodes:
            node.stop()
        switch.stop()
        raise
    return switch, nodes

