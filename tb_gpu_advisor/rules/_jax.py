"""JAX spellings of fixes that several rules share (the TensorFlow ones live in each rule).

Only public JAX APIs: ``jax.device_put``, ``jax.lax.scan``, ``jax.profiler``
(``trace``, ``StepTraceAnnotation``) and the ``jax_transfer_guard`` option.
"""

from __future__ import annotations

from .base import action

#: Overlap the next batch's host->device copy with the current step.
PREFETCH = action(
    "Put the next batch on the GPU while the current step runs (double buffering), so its host->device copy "
    "does not sit between steps.",
    "batch = jax.device_put(next(it))\n"
    "for step in range(num_steps):\n"
    "    state, loss = train_step(state, batch)       # dispatched asynchronously\n"
    "    batch = jax.device_put(next(it))             # copies while the step runs")

#: Find implicit transfers (host NumPy arrays passed to jitted functions, device_get, float(x)).
TRANSFER_GUARD = action(
    "Find what crosses between host and GPU every step: NumPy arrays passed to jitted functions are copied on "
    "each call, and float(x), np.asarray(x), jax.device_get and print wait for the GPU. Keep arrays on the "
    "device and fetch values every N steps.",
    "jax.config.update('jax_transfer_guard', 'log')  # logs every implicit transfer")

#: Several steps per dispatch: one host round trip per N steps.
SCAN_STEPS = action(
    "Run several steps per jitted call (jax.lax.scan over a stack of batches), so per-call dispatch and any "
    "host sync happen once per N steps.",
    "@jax.jit\n"
    "def train_steps(state, batches):                # batches: leading axis of N steps\n"
    "    return jax.lax.scan(train_step, state, batches)")

#: A short steady-state capture with step markers.
CAPTURE = ("# capture a few dozen steady-state steps (~10 s), after warm-up, with step markers:\n"
           "with jax.profiler.trace(logdir):\n"
           "    for step in range(start, start + 30):\n"
           "        with jax.profiler.StepTraceAnnotation('train', step_num=step):\n"
           "            state, loss = train_step(state, batch)\n"
           "    jax.block_until_ready(state)")

#: One SPMD program over every GPU: the batch sharded on a device mesh.
SHARD_BATCH = (
    "from jax.sharding import NamedSharding, PartitionSpec as P\n"
    "mesh = jax.make_mesh((jax.device_count(),), ('batch',))\n"
    "batch = jax.device_put(batch, NamedSharding(mesh, P('batch')))  # equal slice per GPU\n"
    "state, loss = train_step(state, batch)  # one jitted call runs on every GPU")
