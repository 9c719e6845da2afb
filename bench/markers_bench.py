"""What a marker costs on the training thread, from Python (target: <= 5 us).

Usage: PYTHONPATH=python build/venv/bin/python bench/markers_bench.py
Measures, against a real in-process monitor: Monitor.step() (the per-step
call), the raw client step, an epoch begin/end pair and a phase pair (one
datagram each), and a scalars marker. Prints the median of 5 runs per call.

Data-wait timing (target: <= 0.3 us added per step): Monitor.wait_begin() +
wait_end() (what the Lightning and Paddle hooks add per step; plain builtins
underneath), the same pair as pybind11 methods of the client for comparison,
and what `for x in m.data(it)` adds per item over `for x in it` on one list.
Keras's producer-side timing: its clock per batch and its hooks' work per step.
"""
import statistics
import sys
import tempfile
import timeit

import trainvitals
from trainvitals._input import ProducerClock


def median_us(stmt, number):
    runs = timeit.repeat(stmt, number=number, repeat=5)
    return statistics.median(runs) / number * 1e6


def main():
    with tempfile.TemporaryDirectory() as tmp:
        with trainvitals.monitor(out=f"{tmp}/run", quiet=True) as m:
            client = m._client
            n = 200_000
            rows = [
                ("Monitor.step()", median_us(lambda: m.step(), n)),
                ("Monitor.step(i)", median_us(lambda: m.step(7), n)),
                ("client.step(i) (the C++ call alone)", median_us(lambda: client.step(7), n)),
                ("epoch_begin / epoch_end (one datagram each)",
                 median_us(lambda: (m.epoch_begin(1), m.epoch_end(1)), 2_000) / 2),
                ("phase_begin / phase_end (one datagram each)",
                 median_us(lambda: (m.phase_begin("eval"), m.phase_end("eval")), 2_000) / 2),
                ("scalars(loss=...)", median_us(lambda: m.scalars(loss=0.5), 2_000)),
            ]
            items = list(range(1_000_000))

            def plain():
                for _ in items:
                    pass

            def timed():
                for _ in m.data(items):
                    pass

            per_item = len(items)
            wait_rows = [
                ("client.wait_begin() + wait_end() (pybind11 methods)",
                 median_us(lambda: (client.wait_begin(), client.wait_end()), n)),
                ("Monitor.wait_begin() + wait_end()",
                 median_us(lambda: (m.wait_begin(), m.wait_end()), n)),
                ("m.data(): added per item over plain iteration",
                 (median_us(timed, 1) - median_us(plain, 1)) / per_item),
            ]
            # Keras (trainvitals/_input.py): the producer's timed call per
            # batch, on tf.data's thread, and what the batch hooks add per
            # step on the training thread (a step of Keras lasts milliseconds).
            clock = ProducerClock()
            make = lambda: None
            made_by = median_us(lambda: clock.made_by(make), n) - median_us(make, n)
            # A step that waited: each epoch's first, of a new iterator that
            # makes its batch while the step runs (the lookups under the lock).
            fresh = ProducerClock(per_epoch=True)
            waited = lambda: (fresh.epoch_begin(), fresh.step_begin(0), fresh.made_by(make),
                              client.wait_add(fresh.step_end()))
            keras_rows = [
                ("Keras: producer clock per batch (made_by)", made_by),
                ("Keras: step_begin + step_end + wait_add per step",
                 median_us(lambda: (clock.step_begin(), client.wait_add(clock.step_end())), n)),
                ("Keras: the same for a step that waited (epoch_begin too)",
                 median_us(waited, n) - made_by - median_us(make, n)),
            ]
            m.close()  # the run would otherwise last until exit, past the temporary directory
    width = max(len(name) for name, _ in rows + wait_rows + keras_rows)
    worst = max(us for _, us in rows)
    for name, us in rows:
        print(f"{name:<{width}}  {us:7.3f} us")
    verdict = "ok" if worst <= 5 else "ABOVE 5 us"
    print(f"slowest marker call: {worst:.3f} us ({verdict})")
    for name, us in wait_rows:
        print(f"{name:<{width}}  {us:7.3f} us")
    # The callbacks call the client through the Monitor; m.data() is its own row.
    step_cost = max(wait_rows[1][1], wait_rows[2][1])
    verdict = "ok" if step_cost <= 0.3 else "ABOVE 0.3 us"
    print(f"data-wait timing per step: {step_cost:.3f} us ({verdict})")
    for name, us in keras_rows:
        print(f"{name:<{width}}  {us:7.3f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
