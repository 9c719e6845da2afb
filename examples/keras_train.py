"""A tiny Keras training on synthetic data, watched by trainvitals's callback.

    python3 examples/keras_train.py --epochs 3 --out runs/keras
    trainvitals run -- python3 examples/keras_train.py --epochs 3
"""
import argparse
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402

from trainvitals.keras import VitalsCallback  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--steps", type=int, default=20, help="training steps per epoch")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--out", help="run directory when not under `trainvitals run`")
    p.add_argument("--interval", type=float, help="seconds per row when not under `trainvitals run`")
    p.add_argument("--log-dir", help="also write trainvitals's TensorBoard scalars here")
    args = p.parse_args()

    rng = np.random.default_rng(0)
    n = args.steps * args.batch_size
    x = rng.normal(size=(n, 16)).astype("float32")
    y = (x[:, :4].sum(axis=1) > 0).astype("float32")
    xv = rng.normal(size=(4 * args.batch_size, 16)).astype("float32")
    yv = (xv[:, :4].sum(axis=1) > 0).astype("float32")

    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((16,)), keras.layers.Dense(32, activation="relu"),
                              keras.layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    vitals = VitalsCallback(out=args.out, interval=args.interval, log_dir=args.log_dir)
    model.fit(x, y, batch_size=args.batch_size, epochs=args.epochs, shuffle=True,
              validation_data=(xv, yv), callbacks=[vitals], verbose=0)
    # The same run: the evaluation adds its own eval phase; the summary comes at exit.
    loss, acc = model.evaluate(xv, yv, callbacks=[vitals], verbose=0)
    print(f"keras: {args.epochs} epochs, val loss {loss:.3f} acc {acc:.3f}", flush=True)


if __name__ == "__main__":
    main()
