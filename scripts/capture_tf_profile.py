#!/usr/bin/env python3
"""Capture a real TensorFlow profile the two ways users actually do it.

Why this script exists: the Advisor must be tested on what TensorFlow
really writes, not only on files we synthesize.  Capturing needs
TensorFlow; the Advisor itself never does, so run this in a separate
environment (``python -m venv /tmp/tfvenv && /tmp/tfvenv/bin/pip install
tensorflow tensorboard`` -- ``tensorflow-cpu`` is enough without a GPU;
TF 2.21 no longer pulls in ``tensorboard``, which the Keras callback needs
to write its summaries).

Modes:

* ``keras``  -- ``model.fit`` with ``tf.keras.callbacks.TensorBoard(
  log_dir=..., profile_batch=(first, last))``.  Writes event files plus
  ``plugins/profile/<session>/<host>.xplane.pb`` under ``<logdir>/keras``.
  Keras 3 marks each profiled step with a ``Profiled batch`` host event.
* ``custom`` -- a hand-written ``tf.GradientTape`` loop between
  ``tf.profiler.experimental.start/stop``; every step is wrapped in
  ``tf.profiler.experimental.Trace("train", step_num=step, _r=1)``, the
  step marker the TensorFlow profiler guide recommends.  Writes under
  ``<logdir>/custom``.
* ``both``   -- the two above.

It uses whatever device TensorFlow finds (a GPU if one is visible).

Usage::

    /tmp/tfvenv/bin/python scripts/capture_tf_profile.py --logdir /tmp/tf_logs \\
        --mode both --steps 6 --batch-size 32 [--mixed-precision]
    tensorboard --logdir /tmp/tf_logs          # then open the GPU Advisor tab

The Keras run profiles steps 2..(1 + profile_steps) (step 1 is warm-up /
tracing, as the TensorBoard callback default assumes); the custom loop
runs ``--warmup`` unprofiled steps, then profiles ``--steps`` steps.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

import numpy as np


def _import_tf() -> Any:
    """Import TensorFlow lazily so ``--help`` works without it."""
    try:
        import tensorflow as tf
    except ImportError:  # pragma: no cover - depends on the environment
        sys.exit("capture_tf_profile.py needs TensorFlow: pip install tensorflow (or tensorflow-cpu) in a separate venv")
    return tf


def build_model(tf: Any, num_features: int, num_classes: int) -> Any:
    """A small MLP: enough ops (MatMul, BiasAdd, Relu, Softmax, Adam) to be a realistic step, small profile."""
    keras = tf.keras
    inputs = keras.Input(shape=(num_features,), name="features")
    x = keras.layers.Dense(256, activation="relu", name="dense_1")(inputs)
    x = keras.layers.Dense(256, activation="relu", name="dense_2")(x)
    # Keep the logits in float32 under mixed precision, as the Keras guide asks.
    outputs = keras.layers.Dense(num_classes, activation="softmax", dtype="float32", name="probs")(x)
    return keras.Model(inputs, outputs, name="tiny_mlp")


def make_dataset(tf: Any, n: int, num_features: int, num_classes: int, batch_size: int, seed: int) -> Any:
    """Synthetic data through tf.data (so the profile shows the input pipeline, as in real jobs)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, num_features)).astype("float32")
    y = rng.integers(0, num_classes, size=n).astype("int64")
    return tf.data.Dataset.from_tensor_slices((x, y)).batch(batch_size, drop_remainder=True).prefetch(2)


def capture_keras(tf: Any, logdir: str, steps: int, batch_size: int, num_features: int, num_classes: int) -> str:
    """Profile ``steps`` batches of ``model.fit`` with the TensorBoard callback."""
    run_dir = os.path.join(logdir, "keras")
    model = build_model(tf, num_features, num_classes)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    first, last = 2, 1 + steps
    total_batches = last + 2  # a couple of unprofiled batches after the window
    ds = make_dataset(tf, total_batches * batch_size, num_features, num_classes, batch_size, seed=0)
    tb = tf.keras.callbacks.TensorBoard(log_dir=run_dir, profile_batch=(first, last), histogram_freq=0,
                                        write_graph=False, update_freq="epoch")
    model.fit(ds, epochs=1, callbacks=[tb], verbose=0, shuffle=False)  # a Dataset is never shuffled by fit
    print(f"keras: profiled batches {first}..{last} (1-based; the profile's 'Profiled batch' step_num is the 0-based batch index {first - 1}..{last - 1}) -> {run_dir}")
    return run_dir


def capture_custom(tf: Any, logdir: str, steps: int, warmup: int, batch_size: int, num_features: int,
                   num_classes: int) -> str:
    """Profile a custom tf.function training loop with explicit ``train`` step markers."""
    run_dir = os.path.join(logdir, "custom")
    model = build_model(tf, num_features, num_classes)
    optimizer = tf.keras.optimizers.Adam()
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy()
    if tf.keras.mixed_precision.global_policy().name == "mixed_float16":
        optimizer = tf.keras.mixed_precision.LossScaleOptimizer(optimizer)

    @tf.function
    def train_step(x: Any, y: Any) -> Any:
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
            scaled = optimizer.scale_loss(loss) if hasattr(optimizer, "scale_loss") else loss
        grads = tape.gradient(scaled, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    ds = make_dataset(tf, (warmup + steps) * batch_size, num_features, num_classes, batch_size, seed=1)
    it = iter(ds)
    for _ in range(warmup):  # trace and compile outside the profile window
        x, y = next(it)
        train_step(x, y)
    tf.profiler.experimental.start(run_dir)
    try:
        for step in range(steps):
            with tf.profiler.experimental.Trace("train", step_num=step, _r=1):
                x, y = next(it)
                loss = train_step(x, y)
                float(loss)  # wait for the step, as a logging loop would
    finally:
        tf.profiler.experimental.stop()
    print(f"custom: profiled steps 0..{steps - 1} -> {run_dir}")
    return run_dir


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--logdir", required=True, help="TensorBoard log directory (runs are <logdir>/keras, <logdir>/custom)")
    p.add_argument("--mode", choices=("keras", "custom", "both"), default="both")
    p.add_argument("--steps", type=int, default=5, help="number of profiled steps (default 5)")
    p.add_argument("--warmup", type=int, default=2, help="unprofiled warm-up steps of the custom loop (default 2)")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--features", type=int, default=64, help="input width of the synthetic data")
    p.add_argument("--classes", type=int, default=10)
    p.add_argument("--mixed-precision", action="store_true", help="use the mixed_float16 Keras policy")
    args = p.parse_args(argv)
    if args.steps < 1 or args.batch_size < 1 or args.warmup < 0:
        p.error("--steps and --batch-size must be >= 1, --warmup >= 0")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    tf = _import_tf()
    tf.keras.utils.set_random_seed(0)
    if args.mixed_precision:
        tf.keras.mixed_precision.set_global_policy("mixed_float16")
    gpus = tf.config.list_physical_devices("GPU")
    print(f"TensorFlow {tf.__version__}, Keras {tf.keras.__version__ if hasattr(tf.keras, '__version__') else '?'}, "
          f"GPUs: {[g.name for g in gpus] or 'none (CPU-only capture)'}")
    t0 = time.time()
    if args.mode in ("keras", "both"):
        capture_keras(tf, args.logdir, args.steps, args.batch_size, args.features, args.classes)
    if args.mode in ("custom", "both"):
        capture_custom(tf, args.logdir, args.steps, args.warmup, args.batch_size, args.features, args.classes)
    print(f"done in {time.time() - t0:.1f} s; profiles under {args.logdir}/*/plugins/profile/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
