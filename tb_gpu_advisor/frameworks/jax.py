"""JAX (jaxlib with XLA:GPU): how its captures look and how its users fix things.

Names as seen in the real JAX 0.11 H100 captures (``../shared/profiles/real-h100-jax``,
``../shared/docs/real-captures.md``): the Python thread ``python3`` dispatches every call of a jitted
function inside ``PjitFunction(<name>)``; ``jax.device_put`` shows as ``DevicePut``/``DevicePutWithSharding``
with ``BufferFromHostBuffer(<shape>)``; the host->device copy itself runs on ``pjrt_async_work_runner``
threads as ``H2D Dispatch``.  Only public JAX APIs appear in the fixes.
"""

from __future__ import annotations

from ..report_schema import Action
from . import Framework

#: Host event name prefixes written by jaxlib only; plane stats of ``/host:metadata`` written by JAX only.
HOST_MARKERS = ("PjitFunction(",)
METADATA_STATS = ("jax_version", "jaxlib_version")
_DISPATCH = ("PjitFunction(",)
_TRANSFER = ("DevicePut", "PjRtCApiCompiler::BufferFromHostBuffer", "shard_args")
_H2D_WORKER = "H2D Dispatch"
_HOST_BUFFER = "PjRtCApiCompiler::BufferFromHostBuffer("  # + "bf16[4096,4096])"; "f32[])" is a Python scalar
#: pjrt worker threads (copies, callbacks) and idle runtime threads: not the step's critical path.
_BACKGROUND_LINES = ("pjrt_async_work_runner", "py_xla_callback", "Host Threads/")


def is_dispatch(name: str) -> bool:
    return name.startswith(_DISPATCH)


def is_transfer(name: str) -> bool:
    return name.startswith(_TRANSFER)


def is_batch_transfer(name: str) -> bool:
    """A copy of array data to the device: the worker's ``H2D Dispatch``, or a host buffer with dimensions."""
    if name.startswith(_H2D_WORKER):
        return True
    return name.startswith(_HOST_BUFFER) and "[]" not in name


def is_background_line(name: str) -> bool:
    return name.startswith(_BACKGROUND_LINES)


def _a(text: str, snippet: str | None = None, lang: str = "python") -> Action:
    return Action(text=text, snippet=snippet, snippet_lang=lang if snippet else None)  # type: ignore[arg-type]


#: Overlap the next batch's host->device copy with the current step.
PREFETCH = _a(
    "Put the next batch on the GPU while the current step runs (double buffering), so loading and copying it "
    "does not sit inside the step.",
    "batch = jax.device_put(next(it))\n"
    "for step in range(num_steps):\n"
    "    state, loss = train_step(state, batch)       # dispatched asynchronously\n"
    "    batch = jax.device_put(next(it))             # loads and copies while the step runs")
#: Load batches in background threads (the host stall itself).
LOADER = _a(
    "Prepare batches in background workers so the training loop never waits for them: a data loader with worker "
    "processes or threads (grain, tf.data or a thread pool) and a prefetch queue of a few batches.",
    "import concurrent.futures as cf\n"
    "pool = cf.ThreadPoolExecutor(4)\n"
    "futures = [pool.submit(load_batch, i) for i in range(4)]      # 4 batches in flight\n"
    "for step in range(num_steps):\n"
    "    batch = jax.device_put(futures.pop(0).result())\n"
    "    futures.append(pool.submit(load_batch, step + 4))\n"
    "    state, loss = train_step(state, batch)")
#: Find implicit transfers (host NumPy arrays passed to jitted functions, device_get, float(x)).
TRANSFER_GUARD = _a(
    "Find what crosses between host and GPU every step: NumPy arrays passed to jitted functions are copied on "
    "each call, and float(x), np.asarray(x), jax.device_get and print wait for the GPU. Keep arrays on the "
    "device and fetch values every N steps.",
    "jax.config.update('jax_transfer_guard', 'log')  # logs every implicit transfer")
#: Several steps per dispatch: one host round trip per N steps.
SCAN_STEPS = _a(
    "Run several steps per jitted call (jax.lax.scan over a stack of batches), so per-call dispatch and any "
    "host sync happen once per N steps.",
    "@jax.jit\n"
    "def train_steps(state, batches):                # batches: leading axis of N steps\n"
    "    return jax.lax.scan(train_step, state, batches)")
#: jit the whole step (eager op-by-op JAX, or many small jitted functions).
JIT_STEP = _a(
    "jit the whole training step (forward, backward and optimizer update) as one function, so XLA compiles and "
    "fuses it; un-jitted jnp calls each dispatch their own small kernel from Python.",
    "@jax.jit\ndef train_step(state, batch):\n    ...  # grads, optimizer update, metrics: all inside")
#: Keep host round trips out of the step.
ON_DEVICE = _a(
    "Do the host part of the step in jnp inside the jitted function, so the data never leaves the GPU "
    "(np.asarray(x) waits for the GPU and copies to the host; jnp.asarray copies back).",
    "@jax.jit\ndef step(x, w):\n    h = part1(x, w)\n    h = jnp.clip(h, 0, 3)      # was: np.clip(np.asarray(h), 0, 3) on the host\n"
    "    return part2(h, w)")
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
NO_COMMAND_BUFFERS = _a(
    "For per-op kernel names in the profile, capture once with XLA command buffers (CUDA graphs) off: kernels are "
    "then launched one by one and carry their HLO op and JAX op path. Keep them on for production runs.",
    "XLA_FLAGS=--xla_gpu_enable_command_buffer= python train.py   # profiling run only", "shell")

FRAMEWORK = Framework(
    id="jax", name="JAX", host_markers=HOST_MARKERS, metadata_stats=METADATA_STATS,
    transfer_event=is_transfer, batch_transfer_event=is_batch_transfer, dispatch_event=is_dispatch,
    background_line=is_background_line,
    labels={"op": "HLO op", "ops": "HLO ops", "ops_table": "Top HLO ops (kept steps)",
            "input_wait_meaning": "share of the step the GPU was idle while the host loaded the next batch or put it "
                                  "on the device (inside the step, before its jitted call)",
            "host_op_meaning": "JAX has no op placement: a jitted function runs all its ops on the device"},
    not_applicable={"host_op_share": "JAX places every op of a jitted function on the device: there is no op "
                                     "placement to check (host round trips are reported as a finding)",
                    "eager_execution": "JAX has no eager op events; un-jitted code shows as dispatch (launch) wait"},
    fixes={
        "input_bound": (LOADER, PREFETCH),
        "launch_bound": (JIT_STEP, SCAN_STEPS),
        "launch_bound:step": (SCAN_STEPS, _a("Or raise the batch size, so each jitted call does more GPU work per "
                                             "dispatch.")),
        "host_op_placement": (ON_DEVICE, TRANSFER_GUARD),
        "step_gaps": (TRANSFER_GUARD, SCAN_STEPS, PREFETCH),
        "capture_quality:command_buffers": (NO_COMMAND_BUFFERS,),
    },
    capture_snippet=CAPTURE,
)
