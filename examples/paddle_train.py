"""A tiny PaddlePaddle training (paddle.Model.fit) on synthetic data, watched by trainvitals.

    python3 examples/paddle_train.py --epochs 3 --out runs/paddle
    trainvitals run -- python3 examples/paddle_train.py --epochs 3
"""
import argparse
import warnings

import numpy as np

warnings.filterwarnings("ignore", category=UserWarning)  # paddle's notes on ccache and copies
import paddle  # noqa: E402

from trainvitals.paddle import VitalsCallback  # noqa: E402


class Synthetic(paddle.io.Dataset):
    """Two classes: the sign of the sum of the first four features."""

    def __init__(self, n, seed):
        rng = np.random.default_rng(seed)
        self.x = rng.normal(size=(n, 16)).astype("float32")
        self.y = (self.x[:, :4].sum(axis=1) > 0).astype("int64").reshape(-1, 1)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--steps", type=int, default=20, help="training steps per epoch")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--out", help="run directory when not under `trainvitals run`")
    p.add_argument("--interval", type=float, help="seconds per row when not under `trainvitals run`")
    args = p.parse_args()

    paddle.seed(0)
    paddle.set_device("cpu")
    net = paddle.nn.Sequential(paddle.nn.Linear(16, 32), paddle.nn.ReLU(), paddle.nn.Linear(32, 2))
    model = paddle.Model(net)
    model.prepare(paddle.optimizer.Adam(learning_rate=1e-3, parameters=net.parameters()),
                  paddle.nn.CrossEntropyLoss(), paddle.metric.Accuracy())
    vitals = VitalsCallback(out=args.out, interval=args.interval)
    model.fit(Synthetic(args.steps * args.batch_size, 0), Synthetic(4 * args.batch_size, 1),
              batch_size=args.batch_size, epochs=args.epochs, eval_freq=1, shuffle=True,
              drop_last=True, verbose=0, callbacks=[vitals])
    # The same run: the evaluation adds its own eval phase; the summary comes at exit.
    result = model.evaluate(Synthetic(4 * args.batch_size, 1), batch_size=args.batch_size,
                            verbose=0, callbacks=[vitals])
    print(f"paddle: {args.epochs} epochs, val acc {float(result['acc']):.3f}", flush=True)


if __name__ == "__main__":
    main()
