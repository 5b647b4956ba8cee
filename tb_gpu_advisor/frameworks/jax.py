"""JAX (jaxlib with XLA:GPU): how its captures look and how its users fix things.

Names as seen in the real JAX 0.11 H100 captures (``../shared/profiles/real-h100-jax``,
``../shared/docs/real-captures.md``): the Python thread ``python3`` dispatches every call of a jitted
function inside ``PjitFunction(<name>)``; ``jax.device_put`` shows as ``DevicePut``/``DevicePutWithSharding``
with ``BufferFromHostBuffer(<shape>)``; the host->device copy itself runs on ``pjrt_async_work_runner``
threads as ``H2D Dispatch``.  Only public JAX APIs appear in the fixes.
"""

from __future__ import annotations

import re

from tb_gpu_advisor.frameworks import tensorflow, xla
from tb_gpu_advisor.frameworks.base import OPTIMIZER_KERNEL, Action, Framework, action, job_loop, names_batch

#: Host event name prefixes written by jaxlib only; plane stats of ``/host:metadata`` written by JAX only.
#: ``jax.jit``'s C++ dispatch is traced ``PjitFunction(<name>)`` since jit became pjit; before (jaxlib 0.3-0.4.x,
#: ``xla/python/jax_jit.cc`` ``JaxCompiledFunction_tp_vectorcall``) ``JaxCompiledFunction(<name>)``, and those
#: jaxlibs wrote no ``jax_version`` on ``/host:metadata`` (survey h37-survey28).
_JIT_DISPATCH = ("PjitFunction(", "JaxCompiledFunction(")
HOST_MARKERS = _JIT_DISPATCH
METADATA_STATS = ("jax_version", "jaxlib_version")
#: The names JAX gives the XLA modules it compiles: ``jit_<function>`` for ``jax.jit``, ``pmap_<function>`` for
#: ``jax.pmap`` (an XLA module NVTX range ``XlaModule:#hlo_module=jit_train_step,...#`` is a JAX program's).
MODULE_PREFIXES = ("jit_", "pmap_")


def is_module_name(name: str | None) -> bool:
    """An XLA module named as JAX names the modules it compiles (:data:`MODULE_PREFIXES`)."""
    return bool(name) and name.startswith(MODULE_PREFIXES)
_DISPATCH = _JIT_DISPATCH
_TRANSFER = ("DevicePut", "PjRtCApiCompiler::BufferFromHostBuffer", "shard_args")
_H2D_WORKER = "H2D Dispatch"
_HOST_BUFFER = "PjRtCApiCompiler::BufferFromHostBuffer("  # + "bf16[4096,4096])"; "f32[])" is a Python scalar
#: pjrt worker threads (copies, callbacks) and idle runtime threads: not the step's critical path.
_BACKGROUND_LINES = ("pjrt_async_work_runner", "py_xla_callback", "Host Threads/")


#: What jaxlib's runtime writes on the Python thread outside a jitted call's dispatch (the real H100 and MI300X/MI355X
#: captures: ``Wait for donation holds``, ``PythonRefManager::CollectGarbage``, ``np.asarray(jax.Array)``, ``D2H Copy
#: From Staging Buffer``, ``PjRtStreamExecutorBuffer::Release``, ``BufferSequencingEvent::ExecuteOrAddToFutureTasks``);
#: the runtime's calls inside them need no name (``frameworks.user_ranges``).
_RUNTIME = _DISPATCH + _TRANSFER + (
    "Wait for ", "MemoryAllocation", "MemoryDeallocation", "PythonRefManager::", "np.asarray(", "D2H Copy",
    "H2D Dispatch", "D2H Dispatch", "PjRt", "PJRT_", "CommonPjRt", "ParseArguments", "Transpose::",
    "BufferSequencingEvent::", "ThenExecuteCallback")


#: The annotation every read of a ``jax.Array``'s value passes through (``ArrayImpl._value``, jax 0.4 to 0.11 at least):
#: ``float(x)``, ``int(x)``, ``x.item()``, ``x.tolist()``, ``np.asarray(x)``, ``jax.device_get(x)``, ``print(x)`` and
#: ``bool(x)`` in Python control flow each write one on the program's thread, spanning the host's wait for the value
#: (the D2H copy and the staging copy inside it).
_BLOCKING_READ = "np.asarray(jax.Array)"
#: The Python functions of JAX that wait for the device, as the profiler's Python tracer names their frames
#: (``$api.py:2757 block_until_ready``: ``jax.block_until_ready(tree)``; ``x.block_until_ready()`` as a method of the
#: array; ``jax.device_get``), whatever file and line.  ``block_until_ready`` writes no TraceMe of its own: jaxlib waits
#: on the buffers' futures in C++ (``PyArray::BlockUntilReady``), and through the PjRt C API plugin the runtime's
#: ``PjRtStreamExecutorBuffer::Await`` instants are not written either -- with the Python tracer on
#: (``python_tracer_level=1``), its frame is the only record of the wait, spanning it (H200, jax 0.11.2: 330 us a
#: step under ``$api.py:2757 block_until_ready``, ``LocalDeviceState::WaitFor`` inside).  A program waiting each step
#: asked for that wait, as it asks for a read.
_WAIT_FRAMES = ("block_until_ready", "device_get")


#: A Python frame of JAX's own package as a Kineto trace records it (``torch.profiler``'s ``with_stack``:
#: ``/usr/lib/python3/site-packages/jax/_src/api.py(2757): block_until_ready``): the program called into JAX.
_OWN_FRAME = re.compile(r"(?:^|[/\\])jax(?:lib)?[/\\][^()]*\.py\(\d+\): ")


def is_own_frame(name: str) -> bool:
    """A Python frame in JAX's or jaxlib's package (:data:`_OWN_FRAME`): evidence JAX ran the work
    (``Framework.work_frame``), in a capture another framework's profiler wrote."""
    return bool(_OWN_FRAME.search(name))


def is_blocking_read(name: str) -> bool:
    """The program waiting for the device: reading a ``jax.Array``'s value into host memory (:data:`_BLOCKING_READ`) or,
    where the Python tracer recorded it, in a frame of JAX's waits (:data:`_WAIT_FRAMES`)."""
    return name == _BLOCKING_READ or xla.python_frame_function(name) in _WAIT_FRAMES


#: jaxlib's copy of a read's bytes from its pinned staging buffer into the NumPy array (the real H100 captures: 16 MiB
#: in ~1.8 ms, on a second ``python3`` line, inside the read's ``np.asarray(jax.Array)``).
_READ_STAGING = "D2H Copy From Staging Buffer"


def is_read_staging(name: str) -> bool:
    return name == _READ_STAGING


def is_upload_staging(name: str) -> bool:
    """PjRt copying a program's host array into its pinned staging buffer on a worker thread, before the device copy
    (``H2D Dispatch``).  Read upstream (openxla/xla): ``xla/pjrt/common_pjrt_client.cc``
    ``CommonPjRtClient::LinearizeIntoImpl`` runs ``Linearize(staging_data, data, ...)`` under the TraceMe ``H2D
    Dispatch``, then ``CopyRawHostToDeviceAndReturnEvent(staging_data...)`` -- the DMA reads the staging buffer, not
    the array (a zero-copy source takes another path and writes no ``H2D Dispatch``); ``xla/pjrt/gpu/
    se_gpu_pjrt_client.cc`` builds the GPU client with ``GetGpuHostAllocator`` (pinned host memory) as its host memory
    allocator and ``should_stage_host_to_device_transfers=true``, and ``xla/pjrt/gpu/tfrt/tfrt_gpu_client.cc`` stages
    a transfer where ``should_stage_host_to_device_transfers() && !IsDmaMapped(data, size)``: the array staged is not
    pinned.  Reads mirror it: the D2H copy lands in the staging buffer and ``D2H Copy From Staging Buffer`` copies it
    out (:func:`is_read_staging`)."""
    return name == _H2D_WORKER


def is_runtime_event(name: str) -> bool:
    return name.startswith(_RUNTIME)


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


#: Overlap the next batch's host->device copy with the current step.
PREFETCH = action(
    "Put the next batch on the GPU while the current step runs (double buffering), so loading and copying it "
    "does not sit inside the step.",
    "batch = jax.device_put(next(it))\n"
    "for step in range(num_steps):\n"
    "    state, out = step_fn(state, batch)           # dispatched asynchronously\n"
    "    batch = jax.device_put(next(it))             # loads and copies while the step runs")
#: A read of a large array each step: its bytes moving (the transfer, then jaxlib's copy out of its staging buffer) are
#: what the host waits on with the GPU idle -- read less, reduce on the device, or start the copy early
#: (``jax.copy_to_host_async``: "does not wait for the copy to complete ... may speed up a future on-host access").
READ_LESS = action(
    "Read fewer bytes back each step: every np.asarray(x) / jax.device_get / float(x) of a large array moves it to the "
    "host and then out of jaxlib's staging buffer while the GPU idles. Reduce on the device what you log (jnp.mean, "
    "a slice), read it every N steps, or start its copy when the step is dispatched and read it after the next "
    "step's dispatch, so the transfer overlaps the GPU's work.",
    "state, out = step_fn(state, batch)\n"
    "jax.copy_to_host_async(out)       # the device-to-host copy starts now, without waiting\n"
    "state, nxt = step_fn(state, batch)  # the next step is queued first\n"
    "host_out = np.asarray(out)        # the bytes are (mostly) on the host already")
#: Load batches in background threads (the host stall itself).
LOADER = action(
    "Prepare batches in background workers so the step loop never waits for them: a data loader with worker "
    "processes or threads (grain, a thread pool) and a prefetch queue of a few batches.",
    "import concurrent.futures as cf\n"
    "pool = cf.ThreadPoolExecutor(4)\n"
    "futures = [pool.submit(load_batch, i) for i in range(4)]      # 4 batches in flight\n"
    "for step in range(num_steps):\n"
    "    batch = jax.device_put(futures.pop(0).result())\n"
    "    futures.append(pool.submit(load_batch, step + 4))\n"
    "    state, out = step_fn(state, batch)")
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
    "def steps(state, batches):                      # batches: leading axis of N steps\n"
    "    return jax.lax.scan(step_fn, state, batches)")
#: jit the whole step (eager op-by-op JAX, or many small jitted functions), in the words of the job's work: a training
#: step's (forward, backward, update), a forward pass's, or a step of its own where nothing says which -- one hedge
#: "(the forward pass; in training also the backward pass ...)" was told to training jobs and forward passes alike
#: (h37-words32).
_JIT_WHY = "so XLA compiles and fuses it; un-jitted jnp calls each dispatch their own kernel from Python."
JIT_STEP = action(
    "jit the whole step as one function (the forward pass, the backward pass and the optimizer update), "
    + _JIT_WHY,
    "@jax.jit\ndef step_fn(state, batch):\n    ...  # every op of the step inside: grads, update, metrics")
JIT_FORWARD = action(
    "jit the whole forward pass as one function (every op from the inputs to the outputs), " + _JIT_WHY,
    "@jax.jit\ndef forward(params, batch):\n    ...  # every op of the pass inside")
JIT_OWN_STEP = action(
    "jit the whole step as one function (every op it runs between two calls), " + _JIT_WHY,
    "@jax.jit\ndef step_fn(state, batch):\n    ...  # every op of the step inside")
#: Keep host round trips out of the step.
ON_DEVICE = action(
    "Do the host part of the step in jnp inside the jitted function, so the data never leaves the GPU "
    "(np.asarray(x) waits for the GPU and copies to the host; jnp.asarray copies back).",
    "@jax.jit\ndef step(x, w):\n    h = part1(x, w)\n    h = jnp.clip(h, 0, 3)      # was: np.clip(np.asarray(h), 0, 3) on the host\n"
    "    return part2(h, w)")
#: Read values every N steps (the syncs the program asked for: ``host_sync``).
READ_EVERY_N = action(
    "Wait for the GPU or read values off it every N steps, not every step: jax.block_until_ready, float(loss), "
    "x.item(), np.asarray(x), jax.device_get and print(x) each wait until the GPU has run everything queued before "
    "them, so the host dispatches nothing while the GPU drains. Keep the values on the device in between (accumulate "
    "them in the jitted step) and fetch them outside the step loop, so dispatch stays asynchronous; a timing loop "
    "waits once after its last step.",
    "for step in range(num_steps):\n"
    "    state, loss = step_fn(state, batch)      # dispatched asynchronously: returns before the GPU runs it\n"
    "    if step % 100 == 0:\n"
    "        print(step, float(loss))             # the one wait: the queue drains once per 100 steps\n"
    "jax.block_until_ready(state)                 # timing: wait once, after the loop\n"
    "# or keep the metrics on the device and read them once: jax.device_get(metrics) after the loop")
#: The name each job's step marks carry (``StepTraceAnnotation(name, step_num=...)``), by the job's work
#: (``base.job_loop``): a training step's ``train``, as JAX's own docs mark one; a forward pass's ``predict`` and a
#: step of work of no known kind ``step``, as TensorFlow's loops name theirs (``tensorflow.INFERENCE_LOOP``,
#: ``ANY_LOOP``).  Why: one text told every JAX job to mark its steps ``'train'`` -- the forward passes of
#: wild/jax_eager_mi300x_attention too (h37-audit68), as TensorFlow's one text did before h37-left43.
STEP_MARKS = {"training": "train", "inference": "predict", "any_work": "step"}


def capture(mark: str) -> str:
    """JAX's capture advice for a job whose steps are marked ``mark`` (:data:`STEP_MARKS`): a window of a few dozen
    steady-state steps after warm-up, each one marked."""
    return ("# capture a few dozen steady-state steps (~10 s), after warm-up, with step markers:\n"
            "with jax.profiler.trace(logdir):\n"
            "    for step in range(start, start + 30):\n"
            f"        with jax.profiler.StepTraceAnnotation('{mark}', step_num=step):\n"
            "            state, out = step_fn(state, batch)\n"
            "    jax.block_until_ready(state)")


CAPTURE = capture(STEP_MARKS["training"])
#: One SPMD program over every GPU: the batch sharded on a device mesh.
GLOBAL_BATCH = "global_batch = per_device_batch * jax.device_count()"
SHARD_BATCH = (
    "from jax.sharding import NamedSharding, PartitionSpec as P\n"
    "mesh = jax.make_mesh((jax.device_count(),), ('batch',))\n"
    "batch = jax.device_put(batch, NamedSharding(mesh, P('batch')))  # equal slice per GPU\n"
    "state, out = step_fn(state, batch)  # one jitted call runs on every GPU")
NO_COMMAND_BUFFERS = action(
    "For per-op kernel names in the profile, capture once with XLA command buffers (CUDA graphs) off: kernels are "
    "then launched one by one and carry their HLO op and JAX op path. Keep them on for production runs.",
    "XLA_FLAGS=--xla_gpu_enable_command_buffer= python train.py   # profiling run only", "shell")

#: Confirm the input stall: the same step on one batch reused from the device.
CONFIRM_INPUT = action(
    "Confirm: run the same step on one batch kept on the GPU; if it is much faster, loading the data is the "
    "bottleneck.",
    "batch = jax.device_put(next(it))\n"
    "for step in range(100):\n"
    "    state, out = step_fn(state, batch)       # no loading, no host->device copy\n"
    "jax.block_until_ready(state)")
_SPMD_TEXT = ("Run the replicas as one SPMD program (a jitted step over sharded arrays), not a Python loop over "
              "devices, and do not read one device's result (float(x), jax.device_get) before dispatching to the "
              "next.")

#: XLA's scheduler overlaps collectives with independent compute when they are asynchronous.
XLA_OVERLAP = action(
    "Let XLA overlap collectives with compute: its latency-hiding scheduler runs asynchronous collectives behind "
    "independent work (shard the step with jit over a mesh so XLA sees both; pipelined collectives for scanned "
    "layers).",
    "export XLA_FLAGS='--xla_gpu_enable_latency_hiding_scheduler=true "
    "--xla_gpu_enable_pipelined_all_gather=true --xla_gpu_enable_pipelined_reduce_scatter=true "
    "--xla_gpu_enable_pipelined_all_reduce=true'")

#: Memory (issue #29): JAX's rematerialisation, XLA's allocator settings, sharding the state over a mesh.
REMAT = action(
    "Recompute activations in the backward pass instead of keeping them (rematerialisation): wrap each block in "
    "jax.checkpoint, with a policy that keeps the matmuls' outputs and recomputes the rest.",
    "block = jax.checkpoint(block, policy=jax.checkpoint_policies.dots_with_no_batch_dims_saveable)\n"
    "# Flax: nn.remat(Block)")
SHARD_STATE = action(
    "Shard parameters and optimizer state over the devices (FSDP-style: a mesh axis over which the state is split, "
    "all-gathered by XLA where used) instead of replicating them on every GPU.",
    "mesh = jax.make_mesh((jax.device_count(),), ('fsdp',))\n"
    "params = jax.device_put(params, NamedSharding(mesh, P('fsdp')))   # split the largest axis of each array")
#: What holds for any job's memory near capacity (a forward pass, work of no known kind): the arrays held before the
#: call, fewer bytes of them per GPU; fewer inputs per call.
HELD_ARRAYS = action(
    "Find what the arrays held before the call are -- the parameters (sizes x bytes each), buffers, results kept from "
    "earlier calls -- and keep fewer of those bytes on each GPU: delete arrays no longer used, keep parameters that "
    "are not trained in bfloat16, or split them over the devices (a mesh axis, all-gathered by XLA where used).",
    "print(sum(x.nbytes for x in jax.tree.leaves(params)) / 2**30, 'GiB of parameters')\n"
    "print(jax.devices()[0].memory_stats())   # bytes_in_use, peak_bytes_in_use, bytes_limit")
SMALLER_CALL = action(
    "Run fewer inputs (or shorter sequences) in each call: the activations grow with them, the parameters do not "
    "(a training step keeps its batch by accumulating gradients over the smaller calls).",
    "outs = [fn(params, part) for part in jnp.split(batch, 2)]   # half the activations at a time")
MEMORY_FIXES = {
    "activation_memory": (REMAT,),
    "memory_fragmentation": (action(
        "Tell XLA's allocator how much of the GPU to take and let it grow instead of preallocating a fixed region "
        "it then splits (or give it a larger fraction when nothing else uses the GPU).",
        "export XLA_PYTHON_CLIENT_PREALLOCATE=false\nexport XLA_PYTHON_CLIENT_MEM_FRACTION=.90"),),
    "memory_near_capacity": (REMAT, SHARD_STATE),
    "memory_near_capacity:activations": (REMAT,),
    "memory_near_capacity:held": (SHARD_STATE,),
    # a job of no known kind or a forward pass: no backward to recompute in, no optimizer state to shard (h37-memkind36)
    **{f"memory_near_capacity{v}@{tag}": fix for tag in ("inference", "any_work")
       for v, fix in (("", (HELD_ARRAYS, SMALLER_CALL)), (":held", (HELD_ARRAYS,)), (":activations", (SMALLER_CALL,)))},
}


def _capture_fixes(advice: str) -> dict[str, tuple[Action, ...]]:
    """The capture-quality fixes that quote the capture advice, each ending in ``advice``, the job's own
    (:func:`capture`): apart from the step's fixes because they answer how the window was taken, not what the step
    does."""
    return {
        "capture_quality": (action("Profile a short steady-state window instead of the whole run.", advice),),
        "capture_quality:unseen": (action(
            "Trace whole steps, so the GPU work the host waits for is in the trace: start the trace before a step's first "
            "call and stop it after a later step has finished (block_until_ready); if the GPU still sits idle there, "
            "another process shares it (nvidia-smi lists each GPU's processes).", advice),),
        "capture_quality:before_capture": (action(
            "Start the trace with the GPU idle, so the window holds whole steps and none of the work before it: block "
            "until the earlier steps' results are ready (jax.block_until_ready) right before the trace starts.",
            "jax.block_until_ready(state)   # the GPU done with earlier work before the trace opens\n" + advice),),
        "capture_quality:no_gpu": (action("Check that JAX sees the GPU, then profile steady-state steps.",
                                          "print(jax.devices())  # expect CudaDevice(id=0), ...\n" + advice),),
        "capture_quality:gpu_unused": (action(
            "Run the traced steps on the GPU: jitted calls on arrays on the GPU (not under "
            "jax.default_device(jax.devices('cpu')[0]), nor arrays put on a CPU device), after the first (compiling) "
            "calls, and block until their results are ready before the trace stops.",
            "print(jax.devices(), x.devices())  # the arrays the step runs on: CudaDevice, not CpuDevice\n" + advice),),
        # jitted calls with none of their work recorded (``job.kind``'s ``ops_unrecorded``: no event names the
        # backend; ``kernels_unrecorded``: compiled for the GPU, no kernel): the GPU tracer (CUPTI) recorded nothing
        "capture_quality:ops_unrecorded": (action(
            "The jitted calls ran, but none of their work was recorded: check that JAX sees the GPU "
            "(jax.devices() lists CudaDevice), trace with jax.profiler.trace while the steps run on it, and check the "
            "log for CUPTI errors (libcupti on LD_LIBRARY_PATH; in a container, the GPU profiling permission).",
            "print(jax.devices())  # expect CudaDevice(id=0), ...; CpuDevice means the work ran on the CPU\n"
            + advice),),
        "capture_quality:kernels_unrecorded": (action(
            "The jitted calls ran on the GPU, but none of their kernels was recorded: the profiler's GPU tracer "
            "(CUPTI) did not load or dropped its records -- check the log for CUPTI errors (libcupti on "
            "LD_LIBRARY_PATH; in a container, the GPU profiling permission), then trace again with "
            "jax.profiler.trace.", advice),),
        "capture_quality:input_on_cpu": (action(
            "The traced code only loaded batches, and no jitted step ran on them: call the step on each batch inside "
            "jax.profiler.trace, after its first (compiling) calls, and block until its results are ready before the "
            "trace stops.", advice),),
        "capture_quality:copy_only": (action("The profiled window held transfers and no kernel: where a jitted step "
                                             "runs after them, start the trace after its first (compiling) calls, around "
                                             "steps that run on the GPU, and block until their results are ready before "
                                             "it stops.", advice),),
        "capture_quality:window": (action("The profiled window held no GPU work: start the trace after the first "
                                          "(compiling) steps, around steps that run on the GPU, and block until their "
                                          "results are ready before it stops.", advice),),
        "capture_quality:few_steps": (action("Profile a window of a few dozen steps after warm-up (about ten seconds), "
                                             "and mark steps with jax.profiler.StepTraceAnnotation.", advice),),
        "capture_quality:unsteady": (action("Skip warm-up and evaluation/checkpoint steps in the profiled window.",
                                            advice),),
    }


FIXES = {
    **MEMORY_FIXES,
    "allocator_churn": (action("Let XLA's allocator keep its pool: do not disable preallocation with the platform "
                               "allocator, which calls the driver for every buffer.",
                               "unset XLA_PYTHON_CLIENT_ALLOCATOR   # 'platform' allocates and frees on every use\n"
                               "export XLA_PYTHON_CLIENT_MEM_FRACTION=.90"),),
    "dtype_casts": (action("Keep parameters in the compute dtype between steps (a mixed-precision policy that casts the "
                           "parameters once, not on every use), so XLA does not convert them in every step.",
                           "params = jax.tree.map(lambda p: p.astype(jnp.bfloat16), params)  # inference\n"
                           "# training: jmp.get_policy('params=float32,compute=bfloat16,output=bfloat16')"),),
    "dtype_casts:fp16": (action("Keep parameters in the compute dtype between steps (a mixed-precision policy that "
                                "casts the parameters once, not on every use), so XLA does not convert them in every "
                                "step; float16 on a GPU without bf16 Tensor Cores, with loss scaling for training.",
                                "params = jax.tree.map(lambda p: p.astype(jnp.float16), params)  # inference\n"
                                "# training: jmp.get_policy('params=float32,compute=float16,output=float16') "
                                "and jmp.DynamicLossScale"),),
    "comm_exposed": (XLA_OVERLAP,),
    # small collectives one by one (h37-buckets): XLA's combiner packs all-reduces up to its threshold into one
    "comm_exposed:paced": (action(
        "Let XLA combine the small collectives into a few large ones: raise its combine thresholds (bytes per "
        "combined all-reduce, all-gather, reduce-scatter), and reduce a pytree of gradients in one psum, not leaf by "
        "leaf in a Python loop.",
        "export XLA_FLAGS='--xla_gpu_all_reduce_combine_threshold_bytes=134217728 "
        "--xla_gpu_all_gather_combine_threshold_bytes=134217728 "
        "--xla_gpu_reduce_scatter_combine_threshold_bytes=134217728'"),),
    "alltoall_imbalance": (action(
        "Balance the experts' load: a load-balancing auxiliary loss on the router and a capacity factor, so every "
        "device's all-to-all moves about as many tokens.",
        "aux_loss = num_experts * jnp.sum(tokens_per_expert_fraction * router_prob_mean)\n"
        "loss = task_loss + 0.01 * aux_loss"),),
    "input_bound": (LOADER, PREFETCH, CONFIRM_INPUT),
    # the batch was made; the GPU waits for its copy, which a jitted call handed a NumPy array makes itself
    "input_bound:transfer": (action(
        "The batches are ready; the GPU waits for each one's copy to the device, which a jitted function handed a "
        "NumPy array makes inside its call: put the next batch on the device while the current step runs, and pass "
        "the jitted function device arrays.",
        "batch = jax.device_put(next(it))\n"
        "for step in range(num_steps):\n"
        "    state, out = step_fn(state, batch)\n"
        "    batch = jax.device_put(next(it))  # copies while the step runs"),),
    "launch_bound": (JIT_STEP, SCAN_STEPS),
    # the wait comes before the replays of XLA's command buffers: the host preparing each jitted call, not a launch
    # per op -- the step is compiled already, so jitting it again is no fix (h37-review11: the block_until_ready
    # runs read "jit the whole step" beside "another graph cannot cut it")
    "launch_bound:replay": (action(
        "Keep dispatch asynchronous, so the host prepares the next call while the GPU still runs the current one: "
        "nothing in the step loop waits for the GPU (jax.block_until_ready, float(x), np.asarray(x) each drain it "
        "first), and the next batch is on the device before its call."), SCAN_STEPS),
    # the host time is inside the jitted program: XLA running a while loop's iterations from the host, each one a
    # sequence of thunk launches (``Dispatch.loop_iterations_per_step``) -- the step is compiled already, so "jit the
    # whole step" is no fix; the loop moved onto the GPU (a command buffer over the while), unrolled, or shortened is
    "launch_bound:host_loop": (action(
        "Let XLA run the while loop on the GPU: add WHILE (and CONDITIONAL) to the command buffer types, so the loop "
        "and its body are one CUDA graph with conditional nodes and the host launches it once per call instead of "
        "each iteration's kernels one by one. WHILE is not among XLA's default command buffer types (jaxlib 0.10 "
        "still runs while loops from the host, on a CUDA 13 driver), and it needs conditional graph nodes (CUDA "
        "12.3 or newer): XLA drops it where they are missing.",
        "XLA_FLAGS='--xla_gpu_enable_command_buffer=FUSION,CUBLAS,CUBLASLT,CUSTOM_CALL,CUDNN,WHILE,CONDITIONAL' "
        "python run.py", "shell"),
        action("Unroll the loop, so each host-run iteration launches the work of several: the unroll argument of "
               "jax.lax.scan / jax.lax.fori_loop (a fori_loop with static bounds lowers to a scan).",
               "carry, ys = jax.lax.scan(body, carry, xs, unroll=8)            # 8 iterations per loop trip\n"
               "x = jax.lax.fori_loop(0, n, body, x, unroll=8)"),
        action("Or run fewer sequential iterations: vectorise the work across iterations that do not depend on each "
               "other (jax.vmap, array ops), or use an algorithm with fewer sequential steps (an associative scan, "
               "jax.lax.associative_scan, in place of a step-by-step recurrence).")),
    "eager_execution": (JIT_STEP,),
    "launch_bound:step": (SCAN_STEPS, action("Or raise the batch size, so each jitted call does more GPU work per "
                                             "dispatch.")),
    # a step too small for its host cost that waits for the device in every turn (``launch_bound.sync_fixes``)
    "launch_bound:step_sync": (action(
        "Wait for the device once after the loop, not in every call: each block_until_ready(), float(x) or "
        "np.asarray(x) inside it makes the host wait for the GPU and the GPU wait for the host's next call. JAX "
        "dispatches asynchronously: keep the results on the device and read them once after the loop (or every N calls).",
        "outs = [f(x) for x in inputs]     # no block_until_ready() or float() in the loop\n"
        "jax.block_until_ready(outs)       # once, after the loop"),),
    "host_op_placement": (ON_DEVICE, TRANSFER_GUARD),
    "host_sync": (READ_EVERY_N, TRANSFER_GUARD, SCAN_STEPS),
    "excessive_memcpy": (TRANSFER_GUARD,),
    "excessive_memcpy:h2d": (PREFETCH,),
    "excessive_memcpy:read": (READ_LESS,),
    "excessive_memcpy:d2d": (action(
        "Copies on the device in a jitted program are XLA's layout changes and copies of buffers it may not "
        "overwrite: donate the arrays a step replaces, so XLA updates them in place, and keep transposes and "
        "concatenations inside one jitted function, where XLA fuses them.",
        "step = jax.jit(step, donate_argnums=(0, 1))   # params and optimizer state updated in place"),),
    "step_gaps": (TRANSFER_GUARD, SCAN_STEPS, PREFETCH),
    "mixed_precision_off": (action(
        "Compute in bfloat16 and keep float32 parameters: cast parameters and inputs to the compute dtype "
        "in the forward pass and the loss back to float32 (Flax: the layers' dtype vs param_dtype).",
        "import jmp  # pip install jmp\n"
        "policy = jmp.get_policy('params=float32,compute=bfloat16,output=float32')\n"
        "params, x = policy.cast_to_compute((params, x))\n"
        "# Flax: nn.Dense(features, dtype=jnp.bfloat16, param_dtype=jnp.float32)"),),
    "mixed_precision_off:fp16": (action(
        "Compute in float16 with loss scaling ({gpu_fp16}) and keep "
        "float32 parameters: cast parameters and inputs to float16 in the forward pass, scale the loss so small "
        "gradients do not underflow.",
        "import jmp  # pip install jmp\n"
        "policy = jmp.get_policy('params=float32,compute=float16,output=float32')\n"
        "loss_scale = jmp.DynamicLossScale(jnp.float32(2 ** 15))\n"
        "# grads = loss_scale.unscale(jax.grad(lambda p: loss_scale.scale(loss_fn(p)))(params))"),),
    "tensor_core_unused:fp16": (action(
        "Run matmuls/convolutions in float16 with loss scaling ({gpu_fp16}); keep "
        "float32 parameters.",
        "y = jnp.dot(x.astype(jnp.float16), w.astype(jnp.float16))"),),
    "tensor_core_unused": (action(
        "Run matmuls/convolutions in bfloat16 so they can use the Tensor Cores; keep float32 parameters.",
        "y = jnp.dot(x.astype(jnp.bfloat16), w.astype(jnp.bfloat16))\n"
        "# Flax: nn.Dense(features, dtype=jnp.bfloat16, param_dtype=jnp.float32)"),),
    "tensor_core_unused:tf32": (action(
        "On Ampere and newer, fp32 matmuls use TF32 Tensor Cores at JAX's default precision; do not force "
        "'highest'/'float32' precision (globally or per call) where fp32 accuracy is not needed.",
        "jax.config.update('jax_default_matmul_precision', 'tensorfloat32')"),),
    # the hedge "in training" only where the job's kind is not known; a training job is told to check convergence, a
    # forward pass what a bigger batch buys it (h37-auditleft31: real-h100-jax/fp32_highest, read as training at high
    # confidence, was told "(in training, check convergence ...)")
    "batch_size_headroom": (action(
        "Raise the (per-replica) batch size until peak memory nears capacity; check convergence (learning rate "
        "scaling).", GLOBAL_BATCH),),
    "batch_size_headroom@inference": (action(
        "Raise the (per-replica) inference batch size until peak memory nears capacity: the per-pass cost is then "
        "shared by more inputs.", GLOBAL_BATCH),),
    "batch_size_headroom@any_work": (action(
        "Raise the (per-replica) batch size until peak memory nears capacity (in training, check convergence: "
        "learning rate scaling).", GLOBAL_BATCH),),
    "allreduce_extra": (action(
        "Reduce the whole gradient pytree in one collective per step (XLA combines the all-reduces of one "
        "call), and reduce metrics every N steps rather than every step.",
        "grads = jax.lax.pmean(grads, axis_name='batch')  # one call over the pytree, inside the step"),),
    "gpu_imbalance": (action(
        "Shard the batch and the step evenly over all GPUs, and look for arrays committed to {gpu} "
        "(jax.device_put(x, device) without a sharding, a whole batch put on one device).", SHARD_BATCH),),
    "sequential_gpus": (action(_SPMD_TEXT, SHARD_BATCH),),
    "launch_skew": (action("Dispatch one SPMD program to all GPUs (a jitted step over sharded arrays) instead of "
                           "per-device calls from Python threads, so every GPU gets its work at once.", SHARD_BATCH),),
    **_capture_fixes(CAPTURE),
    "capture_quality:command_buffers": (NO_COMMAND_BUFFERS,),
    # a session kept as its trace viewer JSON only (perfetto_trace.json.gz, <host>.trace.json.gz; capture_quality's
    # ``not_kept``): jax.profiler.trace wrote the whole capture, <host>.xplane.pb, into the same folder
    "capture_quality:not_kept": (action(
        "Give the Advisor the <host>.xplane.pb that jax.profiler.trace wrote beside this JSON (perfetto_trace.json.gz, "
        "<host>.trace.json.gz) in <logdir>/plugins/profile/<session>/ (keep or share the whole session folder): it "
        "holds the GPU's name and properties, the allocator's records and XLA's HLO modules that the JSON leaves out.",
        "with jax.profiler.trace(logdir):   # writes plugins/profile/<session>/<host>.xplane.pb\n"
        "    ...\n# copy the whole plugins/profile/<session>/ folder, not its JSON alone"),),
}


def loop_for_job(tags: tuple[str, ...]) -> tuple[str, dict[str, tuple[Action, ...]]]:
    """The capture advice and the capture fixes quoting it for a job's tags (``Framework.looped``): its steps
    marked with the name of its work (:data:`STEP_MARKS`, chosen as every framework's loop is: ``base.job_loop``)."""
    advice = capture(job_loop(tags, STEP_MARKS["training"], STEP_MARKS["inference"], STEP_MARKS["any_work"]))
    return advice, _capture_fixes(advice)


def _per_work(rule: str, fixes: dict[str, tuple[Action, ...]], jitted: dict[str, Action]) -> dict[str, tuple]:
    """``rule``'s fixes for a forward pass (``@inference``) and for work of no known kind (``@any_work``): its own
    with the training step's jit (:data:`JIT_STEP`) in the words of that work (``jitted``), and every variant of the
    rule restated under the tag -- a ``rule@tag`` key rewrites the rule whole (``Framework.for_job``), and a variant's
    fix (``launch_bound:replay``: the step is compiled already) is the same whatever the job's kind."""
    out: dict[str, tuple] = {}
    for tag, jit in jitted.items():
        out[f"{rule}@{tag}"] = tuple(jit if a is JIT_STEP else a for a in fixes[rule])
        out.update({f"{k}@{tag}": tuple(jit if a is JIT_STEP else a for a in v) for k, v in fixes.items()
                    if k.startswith(rule + ":") and "@" not in k})
    return out


#: JAX's jit fixes to a forward pass and to a step of no known kind (h37-words32: the launch-bound and eager findings
#: of real-h100-jax/launch_bound_eager and wild/jax_eager_mi300x_*, work of no known kind, read "in training also the
#: backward pass and the optimizer update").
FIXES.update({k: v for rule in ("launch_bound", "eager_execution")
              for k, v in _per_work(rule, FIXES, {"inference": JIT_FORWARD, "any_work": JIT_OWN_STEP}).items()})

#: Kernels launched with fewer blocks than SMs (``small_grid``): in JAX, a jitted program over tiny arrays.
FIXES["small_grid"] = (action(
    "These kernels run on arrays too small to fill the GPU: give each kernel more data -- raise the batch size, and "
    "batch per-example work with jax.vmap instead of a Python loop, so one kernel covers the batch.",
    "ys = jax.jit(jax.vmap(f))(xs)   # one kernel over the batch, not one per example"),)

#: Attention computed op by op (``unfused_attention``): JAX's fused attention op.
FIXES["unfused_attention"] = (action(
    "Compute attention with one fused op: jax.nn.dot_product_attention lets XLA run the matmuls and the softmax in "
    "one fused kernel (implementation=\"cudnn\" on NVIDIA GPUs), without writing the score matrix to memory.",
    "out = jax.nn.dot_product_attention(q, k, v, mask=mask)\n"
    "# instead of: jax.nn.softmax(q @ k.swapaxes(-1, -2) * scale + bias) @ v"),)

#: The marker of the while-loop command buffer fix (``launch_bound:host_loop``): the XLA flag's types that make it.
WHILE_COMMAND_BUFFER = "WHILE,CONDITIONAL"
#: What a JAX fix names that a vendor's XLA build lacks (``Framework.fit``).  XLA on ROCm records command buffers as
#: HIP graphs, which hold no conditional nodes: its ``RocmCommandBuffer`` answers every conditional and while node
#: "Conditionals are not supported on ROCM" (``xla/stream_executor/rocm/rocm_command_buffer.cc``), so a while loop
#: stays on the host whatever the flag says -- an AMD GPU's job is told the loop's other fixes (unrolling it, fewer
#: sequential iterations), never a CUDA driver's conditional graph nodes (h37-amd69: a generated while loop on an
#: MI300X was told "CUDA 12.3 or newer").
DEVICE_FEATURES = {"AMD": ((WHILE_COMMAND_BUFFER, None, None),)}

FRAMEWORK = Framework(
    id="jax", name="JAX", host_markers=HOST_MARKERS, metadata_stats=METADATA_STATS,
    transfer_event=is_transfer, batch_transfer_event=is_batch_transfer, dispatch_event=is_dispatch,
    dispatch_is_compiled=True, program_backend=xla.executable_backend,
    # ``jax.profiler.StepTraceAnnotation(name, step_num=s)``: a ``TraceAnnotation`` with ``_r=1``, as TensorFlow's
    own_step_marks=tensorflow.own_step_marks,
    # the same profiler's step marks (``StepTraceAnnotation("train")``), and Keras 3's step functions on JAX
    step_marks=tensorflow.PROFILER_STEP_MARKS, step_function=tensorflow.is_step_function,
    # the program's ``jax.profiler.TraceAnnotation('get_batch')``: its own words, as a PyTorch program's (issue #37)
    input_range=names_batch,
    # the iterator's ``__next__`` as the Python tracer records it (``python_tracer_level=1``): the input pipeline's own
    # time where no range of the program's names it (issue #37 item 4)
    input_event=xla.is_pipeline_frame, traced_frame=xla.is_python_tracer_event, frame_label=xla.frame_label,
    background_line=is_background_line, runtime_event=is_runtime_event, blocking_read_event=is_blocking_read,
    read_staging_event=is_read_staging, upload_staging_event=is_upload_staging,
    labels={"op": "HLO op", "ops": "HLO ops", "ops_short": "HLO ops", "ops_table": "Top HLO ops ({kept}, all GPUs)",
            "input_wait_meaning": "share of the {step} the GPU was idle while the host loaded the next batch or put it "
                                  "on the device (inside the {step}, before its jitted call)",
            "host_op_meaning": "JAX has no op placement: a jitted function runs all its ops on the device",
            "gpu_user": "JAX",
            # the call that makes an HLO ``conditional`` (``metrics.flops``' branch note)
            "flops:conditional": "conditional branches (`lax.cond`)",
            # a staged copy's host memory (``job.kind``'s copy words, h37-probe44v): JAX's own terms for what is
            # pinned -- PjRt's staging buffer -- and what is not: the arrays the program handed it
            "copies:staging": "arrays in pageable host memory pass through PjRt's pinned staging buffer, copied "
                              "into it by the host (`H2D Dispatch`) and out of it (`D2H Copy From Staging Buffer`); "
                              "arrays on JAX's `pinned_host` memory kind do not",
            "copies:staged": "host side PjRt's pinned staging buffer; the program's NumPy arrays pageable, not on "
                             "JAX's `pinned_host` memory kind, staged through it by the host: {staged}",
            "dispatch_call": "jitted call",
            "compiled_step": "one jitted function",
            "memcpy:levers": "values kept on the device and read once every few {step}s, reads started early with "
                             "jax.copy_to_host_async, inputs put with jax.device_put ahead of the {step}",
            "step_gaps:host_work": "host work between steps (Python between jitted calls, host syncs)",
            "host_sync:waits": "The host waits for the GPU {calls} (in {who}: the "
                               "jax.block_until_ready, float(loss), x.item(), np.asarray(x), jax.device_get or "
                               "print(x) in the {step}; {wait} blocked in them)",
            "host_sync:meaning": "share of {step} time the GPUs are idle after the program's waits for the device "
                                 "(jax.block_until_ready) and reads of device values (np.asarray(jax.Array): "
                                 "float(x), x.item(), np.asarray(x), jax.device_get, print) until the next device work",
            "host_sync:drains": "each wait or read drains the GPU",
            "step_gaps:launch": "the host dispatching jitted calls"},
    not_applicable={"host_op_share": "JAX places every op on the device of its arrays, jitted or not: there is no op "
                                     "placement to check (host round trips are reported as a finding)"},
    fixes=FIXES,
    device_features=DEVICE_FEATURES,
    capture_snippet=CAPTURE,
    memory_record=xla.MEMORY_RECORD,
    looped=loop_for_job,
    # what shows JAX ran the work in a capture another framework's profiler wrote (``frameworks.detect_work``): frames
    # into its package alone -- XLA's kernels are TensorFlow's XLA's too (``frameworks.XLA_WORK``, h37-vendor66)
    work_frame=is_own_frame,
    writes="xplane", compiled_step_fuses=True, tc_eligible_op=xla.hlo_tc_eligible_type, elementwise_kernels=xla.ELEMENTWISE_KERNELS,
    update_kernels=(OPTIMIZER_KERNEL,),
    cast_kernels=(r"^wrapped_convert", r"^loop_convert_fusion", r"^convert(_fusion)?\b"), cast_ops=("convert",),
    capture_hint=("with jax.profiler.trace(LOGDIR): <20 steps>",
                  "mark each step: with jax.profiler.StepTraceAnnotation('train', step_num=i): ..."),
)
