"""Keras's data wait, measured where its batches are made.

Keras takes each batch inside its compiled step, from a tf.data buffer that a
producer thread fills by calling the Python generator (or the PyDataset's
``__getitem__``): the training thread's hooks cannot see the wait
(docs/markers.md "Data wait"). So the producer's calls are timed instead, and
each step's wait is read from them: a step waits when a batch was being made
as it began (the buffer was empty: a producer that keeps up idles, its buffer
full), from its begin until that batch was made, if that came before the
step's end. A producer whose buffer still holds batches while it works (as it
fills, at an epoch's start, or when its thread waits for the GIL) makes a step
look like it waited when it did not; the error is at most one batch's making
per such step.
"""

from __future__ import annotations

import collections
import time

_now = time.monotonic_ns  # CLOCK_MONOTONIC, as the marker client's


class ProducerClock:
    """The producer threads' calls (written there) and each step's wait (read on
    the training thread). Plain attribute stores under the GIL, no lock."""

    def __init__(self) -> None:
        self.busy = 0  # calls in progress
        self.made = 0  # calls that returned a batch
        self.made_at = collections.deque(maxlen=16)  # (made, when) of the latest
        self._began = 0  # the step in progress: its begin, 0 when none
        self._made = 0  # made at its begin

    # -- the producer's side ---------------------------------------------
    def made_by(self, make, *args):
        """Calls ``make(*args)`` (a generator's next(), ``__getitem__``), timing it."""
        self.busy += 1
        try:
            item = make(*args)
        finally:
            self.busy -= 1
        self.made_at.append((self.made + 1, _now()))
        self.made += 1
        return item

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
    def step_begin(self) -> None:
        self._began = _now() if self.busy else 0
        self._made = self.made

    def step_end(self) -> int:
        """The wait of the step that just ended, in nanoseconds."""
        began, self._began = self._began, 0
        if not began or self.made <= self._made:
            return 0
        for made, when in self.made_at:
            if made == self._made + 1:  # the batch being made as the step began
                return max(0, when - began)
        return 0

