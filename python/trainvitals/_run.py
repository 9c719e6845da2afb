"""The one run of this process, shared by every monitor and callback in it.

A script is one run, as under ``trainvitals run``: the first hook of any
monitor or callback starts it, and it ends when the interpreter exits (or at an
explicit ``close()``), however many fit/evaluate/predict/test calls and
callback objects come in between. Alone, the run is an in-process session (the
C++ sampler on its own thread, one run directory, one summary); under
``trainvitals run`` it is only the connection to the supervisor. Either way the
process has one marker client: one step counter, one phase stack, and one
numbering of calls and epochs.

A process forked from this one (a DataLoader worker) gets a run of its own,
which connects to this one's socket.
"""

from __future__ import annotations

import atexit
import json
import os
import sys
import threading
from typing import Dict, List, Optional, Set

from . import _core, _stacks

SOCKET_ENV = _core.SOCKET_ENV
RUN_DIR_ENV = _core.RUN_DIR_ENV

_said: Set[str] = set()


def say(message: str) -> None:
    try:
        sys.stderr.write(f"trainvitals: {message}\n")
    except Exception:  # stderr closed: nothing left to tell
        pass


def say_once(key: str, message: str) -> None:
    """Says ``message`` the first time ``key`` comes up in this process."""
    if key not in _said:
        _said.add(key)
        say(message)


class ProcessRun:
    """This process's run: its session (alone), its marker client, its calls and epochs."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.state = "new"  # "new" -> "on" (connected, or tried) -> "closed"
        self.session = None  # _core.Session when this process samples itself
        self.client = None  # _core.Client, or None when markers are off
        self.run_dir: Optional[str] = None
        self.summary: Optional[dict] = None
        self.calls = 0  # framework calls (fit, evaluate, ...) begun so far
        self.next_epoch = 0  # the lowest epoch number not yet recorded
        # The monitors (and callbacks' monitors) that joined: what they hold open
        # ends with the run. Held strongly: a loop's monitor that went out of
        # scope with an epoch open still ends it at exit.
        self.monitors: List[object] = []
        self._lock = threading.RLock()

    @property
    def alone(self) -> bool:
        return self.session is not None

    def connect(self, options: Dict[str, str], rank: int, framework: str):
        """Starts the run on first use; returns the marker client (None: markers off)."""
        with self._lock:
            if self.state != "new":
                return self.client
            self.state = "on"
            # Registered first: a training that dies of an exception never
            # reaches close(), and its summary is still written at exit.
            atexit.register(self._close_at_exit)
            try:
                socket = os.environ.get(SOCKET_ENV, "")
                if not socket:
                    session = _core.Session(options)
                    socket = session.start()
                    self.session = session
                    self.run_dir = session.run_dir
                    # Processes started from here on (DataLoader workers, DDP
                    # ranks) report to this run instead of starting their own.
                    if socket:
                        os.environ[SOCKET_ENV] = socket
                        os.environ[RUN_DIR_ENV] = self.run_dir
                if socket:
                    client = _core.Client(socket, rank, framework)
                    if client.ok:
                        self.client = client
                        _stacks.offer(client)
                        if self.session is None and "tensorboard" in options:
                            # Under `run`: the supervisor writes its scalars there too.
                            client.tensorboard_log_dir(os.path.abspath(options["tensorboard"]))
                    else:
                        say_once("client", f"markers off: {client.error}")
            except Exception as e:  # never stop the training for us
                say_once("connect", f"not monitoring this run: {type(e).__name__}: {e}")
            return self.client

    def join(self, monitor) -> None:
        """`monitor` marks into this run: close() ends what it has open."""
        with self._lock:
            if not any(m is monitor for m in self.monitors):
                self.monitors.append(monitor)

    def begin_call(self) -> int:
        """Numbers a framework call (fit, evaluate, predict, test, validate): 1, 2, ..."""
        with self._lock:
            self.calls += 1
            return self.calls

    def close(self, exception: Optional[BaseException] = None) -> Optional[dict]:
        """Ends the run: ends the epochs and phases its monitors have open (an
        `exception` the process is dying of leaves the open epochs open: recorded
        as not complete), disconnects (saying `exception`) and, alone, writes and
        prints the summary once."""
        with self._lock:
            if self.state != "on" or os.getpid() != self.pid:
                return self.summary
            monitors, self.monitors = self.monitors, []
            for monitor in monitors:
                try:
                    monitor.end_call(cut=exception is not None)
                except Exception as e:  # never stop the run's end for one monitor
                    say_once("end", f"{type(e).__name__}: {e}")
            self.state = "closed"
            try:
                atexit.unregister(self._close_at_exit)
                client, self.client = self.client, None
                if client is None:
                    pass
                elif exception is None:
                    client.close()
                else:  # the summary says what the run died of (docs/markers.md, bye)
                    lines = str(exception).splitlines()
                    client.close(type(exception).__name__, lines[0] if lines else "")
                session, self.session = self.session, None
                if session is not None:
                    os.environ.pop(SOCKET_ENV, None)
                    os.environ.pop(RUN_DIR_ENV, None)
                    self.summary = json.loads(session.finish())
            except Exception as e:
                say_once("close", f"the run did not end cleanly: {type(e).__name__}: {e}")
            return self.summary

    def _close_at_exit(self) -> None:
        # The interpreter sets sys.last_value (3.12: last_exc) for the uncaught
        # exception it is exiting with before atexit functions run.
        self.close(getattr(sys, "last_exc", None) or getattr(sys, "last_value", None))


_current: Optional[ProcessRun] = None
_current_lock = threading.Lock()


def current() -> ProcessRun:
    """This process's run; a fresh one after close() or in a forked child."""
    global _current
    with _current_lock:
        run = _current
        if run is None or run.pid != os.getpid() or run.state == "closed":
            run = _current = ProcessRun()
        return run


def existing() -> Optional[ProcessRun]:
    """This process's run when one was started and is still open, else None."""
    run = _current
    if run is None or run.pid != os.getpid() or run.state != "on":
        return None
    return run
