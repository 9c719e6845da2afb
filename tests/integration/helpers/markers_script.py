"""A plain training loop with trainvitals.monitor(): 3 epochs of `--steps` steps,
each followed by an eval phase; optional raw malformed messages first; with
`--socket-file FILE` writes the marker socket path it saw to FILE; with
`--allocator-device N`, allocator figures as a framework on GPU N would send."""
import argparse
import contextlib
import os
import socket
import time

import trainvitals

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=20)
p.add_argument("--epochs", type=int, default=3)
p.add_argument("--malformed", type=int, default=0)
p.add_argument("--out")
p.add_argument("--socket-file")
p.add_argument("--linger", type=float, default=0)
p.add_argument("--crash-in-epoch", type=int, help="raise inside this epoch, after its steps")
p.add_argument("--teardown", type=float, default=0,
               help="seconds spent after an exception before it leaves the monitor's block")
p.add_argument("--eval-only", action="store_true", help="mark only the eval phase")
p.add_argument("--logs", action="store_true", help="send epoch logs with epoch_end, as callbacks do")
p.add_argument("--allocator-device", type=int,
               help="report made-up allocator figures for this device (200 MB more each read)")
args = p.parse_args()

if args.malformed:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(os.environ[trainvitals.SOCKET_ENV])
    for i in range(args.malformed):
        s.send(b"{not json" if i % 2 else b'{"v":1,"type":"epoch_begin","t":1}')

options = {"out": args.out, "quiet": True} if args.out else {}
if args.allocator_device is not None:
    reads = []

    def allocator():
        reads.append(1)
        used = 200e6 * len(reads)
        return [{"device": args.allocator_device, "allocated_bytes": used,
                 "peak_allocated_bytes": used + 50e6, "reserved_bytes": used + 100e6}]

    options["allocator"] = allocator
with trainvitals.monitor(**options) as m:
    if args.socket_file:
        with open(args.socket_file, "w") as f:
            f.write(os.environ.get(trainvitals.SOCKET_ENV, ""))
    try:
        for epoch in range(args.epochs):
            m.epoch_begin(epoch)
            with contextlib.nullcontext() if args.eval_only else m.phase("train"):
                for step in range(args.steps):
                    time.sleep(0.01)
                    m.step(epoch * args.steps + step)
                if epoch == args.crash_in_epoch:
                    raise RuntimeError("CUDA out of memory (made up by the test)")
                m.scalars(loss=1.0 / (epoch + 1))
            if args.eval_only:  # evaluation at the end of the epoch, the rest unmarked
                with m.phase("eval"):
                    time.sleep(0.15)
            logs = {"loss": 1.0 / (epoch + 1), "accuracy": 0.5 + epoch / 10} if args.logs else None
            m.epoch_end(epoch, logs=logs)
            if not args.eval_only:
                with m.phase("eval"):
                    time.sleep(0.15)
        time.sleep(args.linger)
    except RuntimeError:
        time.sleep(args.teardown)  # a traceback, workers shutting down
        raise
