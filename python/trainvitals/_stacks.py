"""Python stacks on request (docs/markers.md "Stacks").

The process registers Python's faulthandler on a free real-time signal,
writing every thread's stack to its file beside the marker socket, and offers
it: when the `stalled` finding opens, or `trainvitals stacks` asks, the monitor
sends that signal and reads the file. faulthandler writes from the signal
handler itself, so a process whose main thread is stuck in C (a lock, a
collective, a read) answers too. TRAINVITALS_STACKS=0 turns it off.
"""
import faulthandler
import os

_fd = None  # the file faulthandler writes to, open for the process's life


def offer(client) -> None:
    """Offers this process's stacks through `client` (a _core.Client)."""
    global _fd
    if os.environ.get("TRAINVITALS_STACKS", "1") == "0":
        return
    signum = client.free_stacks_signal()
    if not signum:
        return
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND | os.O_CLOEXEC | os.O_NOFOLLOW
    try:
        fd = os.open(client.stacks_path, flags, 0o600)
    except OSError:
        return
    try:
        faulthandler.register(signum, file=fd, all_threads=True, chain=False)
    except (RuntimeError, ValueError, OSError):
        os.close(fd)
        return
    if _fd is not None:  # a fork's inherited file: this process has its own now
        os.close(_fd)
    _fd = fd
    client.offer_stacks(signum)
