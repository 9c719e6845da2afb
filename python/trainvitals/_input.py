"""Keras's data wait, measured where its batches are made.

Keras takes each batch inside its compiled step, from a tf.data buffer that a
producer thread fills by calling the Python generator (or the PyDataset's
``__getitem__``): the training thread's hooks cannot see the wait
(docs/markers.md "Data wait"). So the producer's calls are timed and counted
instead, and each step's wait is read from them. The buffer hands batches over
in the order their calls began (a PyDataset's workers make several at once:
Keras's enqueuer yields them in that order), so a step that takes the batches
up to the Nth of its iterator finds its input ready when the first N calls had
returned as it began, and waits otherwise, from its begin until the Nth was
handed over (if that came before the step's end, and a call was in progress as
it began: an idle producer has a full buffer, unless it is an epoch's new
iterator that made nothing yet). An epoch's new iterator begins its first call
when the first step asks for its batch; a PyDataset of several workers has
Keras's enqueuer begin the epoch's calls as the epoch begins instead, whenever
its threads get to run. A batch is handed over when its call returned,
or later where the producer began its next call later than it usually does (a
producer alone converts and buffers each batch before it asks for the next).
"""

from __future__ import annotations

import collections
import itertools
import statistics
import threading
import time

_now = time.monotonic_ns  # CLOCK_MONOTONIC, as the marker client's


class ProducerClock:
    """The producer threads' calls (written there) and each step's wait (read
    on the training thread), under one lock.

    ``per_epoch``: each epoch reads a new iterator (a PyDataset: its batches
    are counted from the epoch's begin, which leaves out those made for
    Keras's look at the input's shape); otherwise one iterator runs through
    the fit (a generator: its batches are counted from the first).
    ``ahead``: workers of the input's own begin each epoch's calls as it
    begins, not on a step's ask (Keras's enqueuer)."""

    def __init__(self, per_epoch: bool = False, ahead: bool = False) -> None:
        self.per_epoch = per_epoch
        self.ahead = ahead
        self.busy = 0  # calls in progress
        self.made = 0  # the first calls that all returned, by the order they began
        self.made_at = collections.deque(maxlen=64)  # (made, when) of the latest
        self.called_at = collections.deque(maxlen=64)  # (call, when it began) likewise
        self._calls = itertools.count(1)  # each call's place in the order they began
        self._lock = threading.Lock()  # the producers' (a PyDataset's workers) side
        self._returned = set()  # calls returned after one before them still runs
        self._base = 0  # batches of the iterator taken before this epoch began
        self._taken = 0  # batches this epoch's steps have taken so far
        self._began = 0  # the step in progress: its begin, 0 when none
        self._needs = 0  # the batch it waits for, by its count
        self._compiling = True  # the fit's first step is still to come
        self._first = False  # the step in progress is the fit's first
        self._asks_with = 0  # the call the step in progress starts by its ask, 0: none
        self._gaps = collections.deque(maxlen=15)  # from a batch's return to the next call

    # -- the producer's side ---------------------------------------------
    def made_by(self, make, *args):
        """Calls ``make(*args)`` (a generator's next(), ``__getitem__``), timing it."""
        with self._lock:
            call = next(self._calls)
            self.busy += 1
            self.called_at.append((call, _now()))
        try:
            return make(*args)
        finally:
            now = _now()
            with self._lock:
                self.busy -= 1
                self._returned.add(call)
                while self.made + 1 in self._returned:
                    self._returned.discard(self.made + 1)
                    self.made_at.append((self.made + 1, now))
                    self.made += 1

    def generator(self, iterator):
        """A generator (Keras adapts a generator object, not any iterator) over
        ``iterator``, timing each next()."""
        while True:
            try:
                item = self.made_by(next, iterator)
            except StopIteration:
                return
            yield item

    # -- the training thread's side --------------------------------------
    def epoch_begin(self) -> None:
        self._base = self.made if self.per_epoch else self._base + self._taken
        self._taken = 0

    def step_begin(self, step: int = -1, batches: int = 1) -> None:
        """A step begins: ``step`` is its index in the epoch (Keras's
        ``on_train_batch_begin``, -1: the one after the last), ``batches`` how
        many it takes (``steps_per_execution``)."""
        first = self._taken if step < 0 else step
        self._taken = first + batches
        needs = self._base + self._taken
        # Waiting: its batches not all made, and a call in progress (an idle
        # producer has a full buffer) or an epoch's new iterator that made
        # nothing yet (it starts with this step's ask).
        fresh = self.per_epoch and self.made == self._base
        waits = self.made < needs and (self.busy or fresh)
        self._began = _now() if waits else 0
        # A new iterator's first call begins when the step asks for its batch,
        # unless the input's own workers begin it.
        self._asks_with = self._base + 1 if fresh and not self.ahead else 0
        self._first, self._compiling = self._compiling, False
        # In a step of several batches, as many as were still to be made.
        self._needs = min(needs, self.made + batches)

    def step_end(self) -> int:
        """The wait of the step that just ended, in nanoseconds."""
        began, self._began = self._began, 0
        if not began or self.made < self._needs:
            return 0
        with self._lock:  # the deques change as the producers' threads call
            asked = _at(self.called_at, self._asks_with)
            made = _at(self.made_at, self._needs)
            handed = _at(self.called_at, self._needs + 1)
        if asked is not None and asked > began:
            began = asked
        elif self._first:
            # The fit's first step compiles train_function before it asks for
            # a batch: when it asked is not known, nor is its wait counted.
            return 0
        if made is None:
            return 0
        # A producer alone hands its batch over (into tensors, into the
        # buffer) before it begins its next call. That gap's usual length is
        # the producer's own way back (the handover is counted from the
        # return); what it takes beyond (a collection of Python's garbage, a
        # wait for the GIL) the step waited too.
        if handed is not None and handed > made:
            self._gaps.append(handed - made)
            made = max(made, handed - int(statistics.median(self._gaps)))
        return max(0, made - began)


def _at(times, key):
    """When `key` happened, from a deque of (key, when) whose keys count up by
    one (calls, batches made); None if not there (any longer)."""
    i = key - times[0][0] if times else -1
    return times[i][1] if 0 <= i < len(times) else None
