"""TensorFlow: how its captures look and how its users fix things (the guide's own spelling).

Markers as seen in the real TF 2.4 V100 capture and the TF 2.21 captures under ``tests/fixtures/real``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tb_gpu_advisor.frameworks import xla
from tb_gpu_advisor.frameworks.base import (OPTIMIZER_KERNEL, Framework, Noted, StepMarks, action, job_loop, names_batch, never,
                                           op_type)
from tb_gpu_advisor.model.columns import union_intervals
from tb_gpu_advisor.model.schema import Action

if TYPE_CHECKING:
    from tb_gpu_advisor.model.trace import HostEvents

#: Host event name prefixes written by the TensorFlow runtime only.
HOST_MARKERS = ("__inference_", "Iterator::", "EagerExecute", "EagerLocalExecute", "EagerKernelExecute",
                "FunctionRun", "SessionRun", "ExecutorState::Process")
#: The NVTX domain of the op ranges NVIDIA's TensorFlow builds push around each op under ``TF_ENABLE_NVTX_RANGES=1``
#: (``tensorflow/core/profiler/nvtx_utils.cc``: ``<OpType>: <node name>``, e.g. ``MatMul: dense/MatMul``, coloured
#: and categorised by op type; ``TF_ENABLE_NVTX_RANGES_DETAILED=1``: a JSON text ``{"op":"MatMul","name":
#: "dense/MatMul","args":[...],"attrs":{...}}``): the framework's ops, never the user's blocks.
NVTX_OP_DOMAIN = "tensorflow-core"
#: The C++ namespace of TensorFlow's own CUDA kernels (``tensorflow::functor::ReluGradHalfKernelVector``,
#: ``tensorflow::BiasNCHWKernel<float>``): compiled into TensorFlow, launched by nothing else -- a tracer's export
#: whose kernels carry it ran TensorFlow, NVTX ranges or not (as ATen's ``at::native::`` shows PyTorch).
KERNEL_NAMESPACE = "tensorflow::"
_NVTX_DETAILED_OP = re.compile(r'^\{\s*"op"\s*:\s*"([^"]*)"\s*,\s*"name"\s*:\s*"([^"]*)"')


def nvtx_detailed_op(text: str) -> str | None:
    """The op of a detailed TensorFlow NVTX op range (``{"op":"MatMul","name":"dense/MatMul",...}`` ->
    ``MatMul: dense/MatMul``, the basic range's name), None for any other text."""
    m = _NVTX_DETAILED_OP.match(text)
    return f"{m.group(1)}: {m.group(2)}" if m else None


#: The consumer blocking on tf.data (the ``...Op::DoCompute`` events; tf_data get_next threads carry exactly these).
INPUT_EVENT_PREFIXES = ("IteratorGetNext", "IteratorGetNextAsOptional", "MultiDeviceIteratorGetNext")
#: tf.data, the GPU event manager and collective threads: background work.
BACKGROUND_LINES = ("tf_data_", "tf_GPU_Event_Manager", "collective_ops")


#: The graph's hand-over of the batch tf.data made to the GPU: the ``_Send`` of each of the iterator's outputs
#: (``IteratorGetNext/_1:_Send``), with the host's staging copies inside it.  The stock tool counts it as input
#: (survey h37-survey18: a Keras step on an RTX 2060 Max-Q whose GPU idled 17 ms for it, the stock overview's "input"
#: 17.05 ms of 41.0, while the Advisor read the host's own work).
#: A replica's copy of the iterator op under ``MirroredStrategy`` is the same op numbered (``IteratorGetNextAsOptional_6
#: /_52:_Send``, ``v100_bert_8gpu_tf24``), its hand-over the same send.
_INPUT_SEND = re.compile(r"^(?:%s)(?:_\d+)?(?:/_\d+)?:_Send$" % "|".join(INPUT_EVENT_PREFIXES))


def is_input_event(name: str) -> bool:
    """The consumer blocking on tf.data (its ``...Op::DoCompute``, or the iterator op's own event where that is not
    recorded: ``MultiDeviceIteratorGetNextFromShard:MultiDeviceIteratorGetNextFromShard`` of a distributed dataset), or
    the graph sending the batch it got to the GPU."""
    if name.startswith(INPUT_EVENT_PREFIXES) and "Op::" in name:
        return True
    return is_input_send(name) or (is_tf_op_event(name) and op_type(name).startswith(INPUT_EVENT_PREFIXES))


def is_input_send(name: str) -> bool:
    """The graph's hand-over of a batch tf.data made to the GPU (``IteratorGetNext/_1:_Send``)."""
    return bool(_INPUT_SEND.match(name))


def is_tf_op_event(name: str) -> bool:
    """A host event that is a TF op (``name:Type``; no spaces in the type)."""
    if ":" not in name or name.startswith(("void ", "Memcpy")) or "::" in name:
        return False
    t = name.rsplit(":", 1)[1]
    return bool(t) and t[0].isupper() and " " not in t and "(" not in t


#: Op types that run only on the host, whatever device their graph is placed on: there is no GPU kernel to move them
#: to.  tf.data's iterators and datasets (``IteratorGetNext``, ``MultiDeviceIteratorGetNextFromShard``,
#: ``OptionalGetValue``, ``*Dataset``); ``RemoteCall``, the call a multi-device iterator makes to run the input
#: pipeline's ``next_func``/``init_func`` on the host; and the collectives' ops (``CollectiveReduce``), which hand the
#: work to the collective executor, whose NCCL kernels are the GPU's part.  Seen host-placed on the TF 2.4 V100 BERT
#: capture, where they were counted as ops to move to the GPU.
_HOST_ONLY_TYPE = re.compile(r"Iterator|Dataset(V\d+)?$|^Optional[A-Z]|^RemoteCall$|^Collective[A-Z]")


def is_host_only_op_type(type_: str) -> bool:
    """A TF op type that runs only on the host (:data:`_HOST_ONLY_TYPE`)."""
    return bool(_HOST_ONLY_TYPE.search(type_))


def is_background_line(name: str) -> bool:
    return name.startswith(BACKGROUND_LINES)


#: The threads tf.data runs its iterators and their functions from (``tf_data_iterator_get_next``,
#: ``tf_data_iterator_resource``, a private pool's ``tf_data_private_threadpool``).
PIPELINE_LINES = ("tf_data_",)
#: The call tf.data makes to run a dataset's captured function (a ``map``'s, ``filter``'s, or Keras's slicing of NumPy
#: arrays into batches, ``GatherV2``): TensorFlow's grouping makes it the root of a group of its own, whose ops run
#: on the inter-op threads (``tf_Compute``) the step's own ops run on.
PIPELINE_FUNCTION_RUN = "FunctionRun"
#: tf.data's own call of a captured function, by the name of the call's event (``RunAsync`` from a parallel ``map``,
#: ``Run``/``RunWithBorrowedArgs``/``RunInstantiated`` from the others): TensorFlow 2.3 writes it on the tf.data
#: thread with no group and leaves the function's ops ungrouped (h37-huntxla63), where later releases root a group at
#: its ``FunctionRun`` -- and TensorFlow 2.4 still leaves ungrouped the ops of the function a ``MultiDeviceIterator``'s
#: generator calls (its ``_next_func``, ``RemoteCall``-ing ``MultiDeviceIteratorGetNextFromShard``: the shared V100
#: BERT, h37-xla64).
PIPELINE_CAPTURED_CALL = "InstantiatedCapturedFunction::Run"
#: The asynchronous form of :data:`PIPELINE_CAPTURED_CALL`: the call hands the function to a runner and returns, so
#: the function's ops run after the call's event, never inside it.
PIPELINE_CAPTURED_ASYNC = PIPELINE_CAPTURED_CALL + "Async"


def pipeline_function_ops(h: HostEvents, device_groups: np.ndarray) -> np.ndarray:
    """Host event indices (ascending) of the TF ops tf.data's captured functions ran: the op events of a group whose
    root is a ``FunctionRun`` on a tf.data thread and which no device event shares (``device_groups``: the group ids
    the GPUs' events carry -- a group with GPU work is a step's, whatever started it).

    Why: such an op runs beside the step's ops, on the same inter-op threads, but it is the input pipeline making a
    batch, placed on the host by design (tf.data runs on the CPU).  Read by time alone it was "a TF op of the step
    placed on the host": a Keras ``fit`` on NumPy arrays slices each batch with a ``GatherV2`` of the whole array
    (1.16 ms on a T4 VM's two inter-op threads while the GPU idled), and the report said to move it to the GPU
    (h37-survey68, ECBM4040's Keras CNNs)."""
    if not len(h) or not (h.group_id >= 0).any():
        return np.zeros(0, np.int64)
    on_pipe = np.fromiter((n.startswith(PIPELINE_LINES) for n in h.line_names), bool, len(h.line_names))
    tf_ops = h.name_mask(is_tf_op_event) & ~on_pipe[h.line]
    ops = np.zeros(len(h), dtype=bool)
    run = h.names.index(PIPELINE_FUNCTION_RUN) if PIPELINE_FUNCTION_RUN in h.names else -1
    if run >= 0:
        roots = (h.name == run) & on_pipe[h.line] & (h.group_id >= 0)
        groups = np.setdiff1d(np.unique(h.group_id[roots]), device_groups)
        ops |= tf_ops & np.isin(h.group_id, groups)
    calls = h.name_mask(lambda n: n.startswith(PIPELINE_CAPTURED_CALL)) & on_pipe[h.line] & (h.group_id < 0)
    if calls.any():  # TensorFlow 2.3, and 2.4's multi-device iterator: the function's ops carry no group either
        # a captured function is a graph its executor runs: an eager op (a callback's summary) is none of its ops
        ops |= _ungrouped_function_ops(h, calls, tf_ops & (h.group_id < 0) & (h.is_eager != 1))
    return np.flatnonzero(ops)


def _ungrouped_function_ops(h: HostEvents, calls: np.ndarray, ungrouped: np.ndarray) -> np.ndarray:
    """Bool per host event: the ``ungrouped`` TF ops (in a capture TensorFlow grouped: every op a step's executor ran
    carries its step's group) that tf.data's ungrouped captured-function ``calls`` ran, by where a call puts them.

    A synchronous call (``RunWithBorrowedArgs``, ``Run``, ``RunInstantiated``) blocks its tf.data thread until the
    function returns, so the function's ops are the ungrouped ops inside the call's span, on whatever thread they ran
    (TensorFlow 2.4's ``MultiDeviceIterator`` generator runs its ``_next_func`` on a GPU's private thread, which
    ``RemoteCall``-s the shard fetch onto the inter-op threads) -- and, where they run ungrouped again after the first
    call, the same ops by their node names: the function run once more by a call the capture cut (a call's event is
    written at its end, so one still running when the capture stopped is not recorded: the shared V100 BERT's last
    ``_next_func`` of each GPU).  An ungrouped op outside every call and no node of a function a call ran stays the
    step's (h37-xla64: session 63 took every ungrouped op after the first call).

    An asynchronous call (``RunAsync``, a parallel ``map``'s) hands the function to a runner and returns at once, so
    its ops run after the call, never inside it: the ungrouped ops after the first such call (TensorFlow 2.3's Keras
    batch slicing, ``GatherV2`` starting 20 us to 1.5 ms after an 8-125 us ``RunAsync``:
    Pol-Zeimet/Gestenerkennung_Projektarbeit_2's nine Colab sessions, h37-huntxla63)."""
    out = np.zeros(len(h), dtype=bool)
    is_async = calls & h.name_mask(lambda n: n == PIPELINE_CAPTURED_ASYNC)
    if is_async.any():
        out |= ungrouped & (h.start >= h.start[is_async].min())
    sync = np.flatnonzero(calls & ~is_async)
    if sync.size:
        s, e = union_intervals(h.start[sync].astype(np.int64, copy=False), h.end[sync].astype(np.int64, copy=False))
        cand = np.flatnonzero(ungrouped & (h.start >= s[0]))
        k = np.searchsorted(s, h.start[cand], side="right") - 1  # the call span each op starts in, if any
        inside = cand[(k >= 0) & (h.end[cand] <= e[np.maximum(k, 0)])]
        out[inside] = True
        out[cand[np.isin(h.name[cand], h.name[inside])]] = True  # the same function's nodes, run by a call unrecorded
    return out


#: Host bookkeeping / wrapper events that are not "host compute" by themselves (their children are classified).
BOOKKEEPING_EVENTS = frozenset({
    "FunctionRun", "SessionRun", "Profiled batch", "TraceContext", "ExecutorState::Process", "ExecutorPropagateOutputs",
    "ExecutorDoneCallback", "MemoryAllocation", "MemoryDeallocation", "KernelLaunch", "KernelExecute", "EagerExecute",
    "EagerKernelExecute", "EagerLocalExecute", "TfOpRun", "RemoteCallOpDone", "PrefetchConsume", "PrefetchProduce",
    "InstantiatedCapturedFunction::RunWithBorrowedArgs", "BaseCollectiveExecutor::ExecuteAsync", "MemCpyAsync",
})
#: tf.data iterators and prefetching, and the ``train``/``test`` step roots: markers, not host compute.
BOOKKEEPING_PREFIXES = ("Iterator::", "Prefetch", "train", "test")
#: Rendezvous ops: they move tensors, they compute nothing.
TRANSFER_OPS = frozenset({"_Send", "_Recv", "_HostSend", "_HostRecv"})


def is_bookkeeping(name: str) -> bool:
    """A TF runtime event that is no host compute of its own: wrappers, markers, rendezvous, numbered ids."""
    return (name in BOOKKEEPING_EVENTS or name.startswith(BOOKKEEPING_PREFIXES) or name.isdigit()
            or op_type(name) in TRANSFER_OPS)


#: TF's own Python API and C API on the Python thread (the TF 2.21 Keras 3 capture: ``TFE_Py_FastPathExecute_C``,
#: ``TFE_DeleteTensorHandle``, ``convert_to_tensor``, ``tf.constant``).
_PY_API = ("TFE_", "convert_to_tensor", "tf.")
#: Keras' compiled step functions, whose call tf.function traces under the function's name (the TF 2.21 Keras 3
#: capture: ``multi_step_on_iterator`` around each step's ``FunctionRun``; Keras 2: ``train_function``).
_KERAS_FUNCTIONS = re.compile(r"^(multi_step_on_iterator|one_step_on_(iterator|data)(_distributed)?|"
                              r"(train|test|predict)_function)$")


def is_step_function(name: str) -> bool:
    """A call of Keras' compiled step function (``train_function``, ``multi_step_on_iterator``, ...): it runs the
    step's graph, so what the host launches after the last one returned is no part of a step (the TensorBoard
    callback's summary ops after the profiled batch; ``steps.ends._grouped_after_last_mark``).  Keras 2.x on TF 2.x
    writes it with no ``_r`` or ``step_num`` stat, so it is no step marker of its own."""
    return bool(_KERAS_FUNCTIONS.match(name))


def is_runtime_event(name: str) -> bool:
    """A host event TensorFlow's runtime writes on the program's thread (its markers, wrappers, ops, input waits,
    compiles, Python API): what is left there is the program's own ``tf.profiler.experimental.Trace`` ranges."""
    return (name.startswith(HOST_MARKERS + _PY_API) or is_bookkeeping(name) or is_tf_op_event(name)
            or is_input_event(name) or name.startswith(_COMPILING) or bool(_KERAS_FUNCTIONS.match(name)))


#: Step markers: Keras 3 ``Profiled batch`` events (with ``step_num``); ``tf.profiler.experimental.Trace("train",
#: step_num=...)`` and Keras 2 ``train``/``test`` roots (JAX's ``StepTraceAnnotation("train")`` reads the same);
#: ``TraceContext`` roots.
KERAS_BATCH_EVENT = "Profiled batch"
TRACE_CONTEXT_EVENT = "TraceContext"
STEP_ROOT = re.compile(r"^(train|test)[^/]*$")


def is_step_root_name(name: str) -> bool:
    """A step marker's name (``Profiled batch``, ``train``/``test`` roots, ``TraceContext``): it spans the program's
    step, the program's own code included, so it contains no runtime call's children (``frameworks.user_ranges``)."""
    return is_keras_batch(name) or is_trace_context(name) or is_step_root(name)


def is_keras_batch(name: str) -> bool:
    """Keras 3's ``Profiled batch`` event (``tf.profiler.experimental.Trace("Profiled batch", step_num=...)``)."""
    return name == KERAS_BATCH_EVENT


def is_trace_context(name: str) -> bool:
    """A ``TraceContext`` root: a step marker whatever its stats."""
    return name == TRACE_CONTEXT_EVENT


def is_step_root(name: str) -> bool:
    """A ``train``/``test`` root's name (:data:`STEP_ROOT`): a step marker where it carries ``_r`` or ``step_num``."""
    return bool(STEP_ROOT.match(name))


def keras_batch_marks(h: HostEvents) -> np.ndarray:
    """Bool per host event: Keras 3's ``Profiled batch`` events (:func:`is_keras_batch`)."""
    return h.name_mask(is_keras_batch)


def step_root_marks(h: HostEvents) -> np.ndarray:
    """Bool per host event: ``TraceContext`` roots and ``train``/``test`` roots -- Keras 2's, and
    ``tf.profiler.experimental.Trace("train", step_num=...)``'s (JAX's ``StepTraceAnnotation("train")`` reads the
    same) -- that carry ``_r`` or ``step_num``."""
    ctx = h.name_mask(is_trace_context)
    return (h.name_mask(is_step_root) | ctx) & ((h.root >= 0) | (h.step_num >= 0) | ctx)


#: The step marks TensorFlow's profiler writes under names of its own, in the order the steps try them
#: (``Framework.step_marks``): JAX's and PyTorch/XLA's XPlanes are written by the same profiler, and Keras 3 runs
#: on either, so their frameworks read these too.
PROFILER_STEP_MARKS = (
    StepMarks("keras_profiled_batch", "Keras 3 `Profiled batch` events (step_num)", keras_batch_marks),
    StepMarks("trace_train", "`train`/`test` step markers", step_root_marks),
)


def own_step_marks(h: HostEvents) -> np.ndarray:
    """Bool per host event: a step mark the program placed around each of its iterations, whatever its name -- a root
    (``_r``) numbered by ``step_num``, as ``tf.profiler.experimental.Trace(name, step_num=step, _r=1)`` writes it
    (TensorFlow's docs: ``_r=1`` makes the profiler treat the event as a step) and
    ``jax.profiler.StepTraceAnnotation(name, step_num=step)`` (a ``TraceAnnotation`` with ``_r=1`` added).

    Why by its stats, not its name: the name tells the step's work (Keras 2's ``train``/``test``; the ``predict`` and
    ``step`` this tool's own capture advice gives a forward pass and work of no known kind: ``INFERENCE_LOOP``,
    ``ANY_LOOP``, ``jax.STEP_MARKS``), the two stats that it is the program's step.  Read by :data:`STEP_ROOT` alone,
    a user who followed our advice for a forward pass got steps read as a guess, ``_r`` roots of any kind (h37-marks68).
    A ``step_num`` without ``_r`` (or an ``_r`` without a number: the runtime's ``FunctionRun``) is no such mark."""
    return (h.root >= 0) & (h.step_num >= 0)

#: TF op types whose work Tensor Cores can do (the stock tool's list + Einsum, which lowers to BatchMatMul), less
#: ``DepthwiseConv2dNative``: a depthwise convolution sums no channels, so no matrix-unit tile has an inner dimension
#: to fill (``devices.depthwise_one``; h37-huntn67).
TC_ELIGIBLE_OP_PREFIXES: tuple[str, ...] = (
    "Conv2D",  # Conv2D, Conv2DBackpropInput/Filter
    "Conv3D",
    "MatMul",
    "FusedMatMul",
    "_FusedMatMul",
    "_FusedConv2D",
    "XlaDot",  # XlaDot, XlaDotV2
    "XlaConv",  # XlaConv, XlaConvV2
    "XlaEinsum",
    "CudnnRNN",
    "BatchMatMul",
    "Einsum",
)



def is_tc_eligible_op(op_type_: str) -> bool:
    """A TF op type whose work Tensor Cores can do; with XLA (``jit_compile``), an HLO op type."""
    return op_type_.startswith(TC_ELIGIBLE_OP_PREFIXES) or xla.hlo_tc_eligible_type(op_type_)


#: Element-wise kernels TensorFlow generates: Eigen's evaluators and TF's functors (and XLA's fusions).
ELEMENTWISE_KERNELS = (r"EigenMetaKernel", r"scalar_\w{1,64}?_op", r"TensorCwise", r"cwise", r"BinaryFunctor",
                       r"UnaryFunctor") + xla.ELEMENTWISE_KERNELS
#: TF's own training kernels (``named_kernel_kinds``; tensorflow/core/kernels/training_ops_gpu.cu.cc:
#: ``tensorflow::functor::ApplyAdamKernel<float>``, the ``SparseApply*Kernel`` forms): the optimizer's update of each
#: variable element from its gradient and slots -- element-wise work (a sparse form's on the rows it gathers).
TRAINING_KERNEL_KINDS = ((r"\btensorflow::functor::(?:Sparse)?Apply\w*Kernel\b", "elementwise"),)



#: Print where every op runs (op placement; the guide's first debugging step for host ops and copies).
LOG_PLACEMENT = "tf.debugging.set_log_device_placement(True)"


@dataclass(frozen=True)
class Loop:
    """The step a fix's code defines and loops, in the words of the job's kind: a training step over a dataset's
    batches, an inference call on inputs, or a step of work of no known kind (``loop_for_job`` picks one by the job's
    tags).  The fixes that define or run the step are composed from it, so no ``def train_step`` is written to work
    that does not train (h37-left36; PyTorch's ``pytorch.Loop``, h37-left29)."""

    #: the step function's name and its parameters (``def {fn}({params})``)
    fn: str
    params: str
    #: the loop over the run's batches, binding ``params``
    header: str
    #: the name of the step's result the host reads
    value: str
    #: what the step is, in prose ("training step"), and the Keras call that makes it a tf.function
    noun: str
    keras: str
    #: the step's body as written out where the fix shows it whole (eager_execution's tf.function)
    body: str
    #: ``model.compile``'s arguments before its options (a training step's optimizer, loss and metrics)
    compile_args: str = ""
    #: what the loop binds from each batch (``header``'s target after ``step``)
    bound: str = "batch"
    #: the name a custom loop's step marks carry (``tf.profiler.experimental.Trace(name, step_num=...)``)
    trace: str = "step"
    #: how Keras profiles a window of these steps, "" where it has no way (its TensorBoard callback's
    #: ``profile_batch`` profiles ``fit``'s batches only)
    keras_capture: str = ""

    def define(self, decorator: str = "@tf.function", body: str = "    ...") -> str:
        """The step defined under ``decorator``, with ``body``."""
        return f"{decorator}\ndef {self.fn}({self.params}):\n{body}"


TRAINING_LOOP = Loop(fn="train_step", params="x, y", header="for step, (x, y) in enumerate(ds):", value="loss",
                     noun="training step", keras="Keras fit does it",
                     body="    with tf.GradientTape() as tape:\n        loss = loss_fn(y, model(x, training=True))\n"
                          "    grads = tape.gradient(loss, model.trainable_variables)\n"
                          "    optimizer.apply_gradients(zip(grads, model.trainable_variables))\n    return loss",
                     compile_args="optimizer, loss, metrics=[...], ", trace="train",
                     keras_capture="tf.keras.callbacks.TensorBoard(log_dir=logdir, profile_batch=(100, 120))")
#: a model called on inputs (Keras predict, a SavedModel's signature)
INFERENCE_LOOP = Loop(fn="predict_step", params="x", header="for step, x in enumerate(ds):", value="out",
                      noun="inference step", keras="Keras predict does it",
                      body="    return model(x, training=False)", bound="x", trace="predict")
#: GPU work of no known kind: a step of its own, not a training step
ANY_LOOP = Loop(fn="run_one_step", params="batch", header="for step, batch in enumerate(ds):", value="out",
                noun="step", keras="Keras fit and predict do it",
                body="    ...                           # the step's own work")


def capture(loop: Loop) -> str:
    """TensorFlow's capture advice for a job: a window of its steps after warm-up -- a training job's through Keras'
    TensorBoard callback or the profiler's start and stop; a job Keras cannot profile (``predict`` and work of no
    known kind: the callback profiles ``fit``'s batches only) through start and stop around its own loop, each step
    marked (h37-left43: one training text served every job)."""
    if loop.keras_capture:
        return (f"# capture ~10 s of steady-state {loop.noun.split()[0]}, after warm-up:\n{loop.keras_capture}\n"
                "# or: tf.profiler.experimental.start(logdir); ...20 steps...; tf.profiler.experimental.stop()")
    return (f"# capture ~10 s of steady-state {loop.noun}s, after warm-up, each one marked as a step:\n"
            "tf.profiler.experimental.start(logdir)\n"
            f"for step, {loop.bound} in enumerate(ds.skip(100).take(20)):   # after warm-up\n"
            f"    with tf.profiler.experimental.Trace('{loop.trace}', step_num=step, _r=1):\n"
            f"        {loop.value} = {loop.fn}({loop.params})\n"
            "tf.profiler.experimental.stop()")


def tf_function(loop: Loop) -> Action:
    """One graph per step instead of op-by-op eager execution."""
    return action("Make sure the step runs as a graph, not op by op in eager mode.", loop.define())


def jit_compile(loop: Loop) -> Action:
    """XLA for the whole step."""
    return action("Fuse the small ops with XLA.", loop.define("@tf.function(jit_compile=True)") + "\n"
                  "# Keras: model.compile(..., jit_compile=True)")


#: ``jit_compile=True`` is TF 2.5's spelling (TF 2.1-2.4: ``tf.function(experimental_compile=True)``); no XPlane
#: states TF's version (the lone TF 2.4 BERT's holds none: h37-review10), so a fix that names it says both.
DEVICE_FEATURES = {vendor: (("jit_compile=True", (2, 5), Noted(
    "jit_compile: TF 2.5 or newer; TF 2.1-2.4 spell it @tf.function(experimental_compile=True)")),)
    for vendor in ("NVIDIA", "AMD")}

TF_FUNCTION = tf_function(TRAINING_LOOP)
JIT_COMPILE = jit_compile(TRAINING_LOOP)


def steps_per_execution(loop: Loop) -> Action:
    """Several steps per call: Keras callbacks and per-step Python run every N steps (``model.compile``'s arguments:
    a training step's optimizer and loss, none for a model only called)."""
    return action(
        "Disable Keras callbacks and metrics to confirm, then run them every N steps instead of every step: "
        "several steps per tf.function call (custom loops: a tf.while_loop / tf.range inside the tf.function).",
        f"model.compile({loop.compile_args}steps_per_execution=32)  # TF<2.4: experimental_steps_per_execution")


STEPS_PER_EXECUTION = steps_per_execution(TRAINING_LOOP)


def sync_after_loop(loop: Loop) -> Action:
    """Read results once after the loop, not in every turn (``launch_bound:step_sync``), for one job's step.

    Why TensorFlow's own words: its waits for the GPU are reads of a tensor's value -- ``.numpy()``, ``float(t)``,
    ``print(t)``, a Python ``if`` on a tensor -- not ``torch.cuda.synchronize()`` or ``.item()``, and its way to keep
    the host from driving one tiny step at a time is the loop inside one ``tf.function`` (``tf.range``) or Keras's
    ``steps_per_execution`` (h37-turn66 *Left* 3: the fix was PyTorch's and JAX's only)."""
    return action(
        f"Read results once after the loop, not in every {loop.noun}: each .numpy(), float(tensor) or print of a "
        f"tensor inside it makes the host wait for the GPU and the GPU wait for the host's next call. Keep the "
        f"results on the GPU as tensors and read them once after the loop (or every N {loop.noun}s); run the loop "
        f"inside one tf.function (a tf.range loop) so the host does not drive each {loop.noun}.",
        "@tf.function\n"
        "def run(n):\n"
        "    total = tf.constant(0.0)\n"
        f"    for i in tf.range(n):              # the loop inside the graph: no .numpy() per {loop.noun}\n"
        f"        total += {loop.fn}(...)\n"
        "    return total\n"
        "print(float(run(1000)))                # one read, after the loop")
#: Launch kernels from dedicated per-GPU threads (guide §1.2.1, §2.2).
_TF_DATA_THREADS = action("Keep tf.data from competing for the same cores (bound its threads).",
                          "options = tf.data.Options()\noptions.threading.private_threadpool_size = 8\n"
                          "ds = ds.with_options(options)")

#: Gradient all-reduce packed and overlapped with the backward pass.
TF_COMM_OVERLAP = action(
    "Overlap gradient all-reduce with the backward pass: MirroredStrategy / MultiWorkerMirroredStrategy pack "
    "gradients into buckets and reduce them as they are ready; with XLA (jit_compile) the latency-hiding "
    "scheduler overlaps collectives with compute.",
    "options = tf.distribute.experimental.CommunicationOptions(bytes_per_pack=50 * 1024 * 1024,\n"
    "    implementation=tf.distribute.experimental.CommunicationImplementation.NCCL)\n"
    "strategy = tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)")

#: Memory (issue #29): recomputed gradients, TensorFlow's allocator options.
RECOMPUTE = action(
    "Recompute activations in the backward pass instead of keeping them: wrap each block's call in "
    "tf.recompute_grad.", "block_fn = tf.recompute_grad(block)\ny = block_fn(x)")
MEMORY_FIXES = {
    "activation_memory": (RECOMPUTE,),
    "memory_fragmentation": (action(
        "Use the asynchronous CUDA allocator (stream-ordered, it reuses freed memory of any size), or let the BFC "
        "allocator grow instead of taking the whole GPU up front.",
        "export TF_GPU_ALLOCATOR=cuda_malloc_async\n"
        "# or: tf.config.experimental.set_memory_growth(tf.config.list_physical_devices('GPU')[0], True)"),),
    "memory_near_capacity": (RECOMPUTE, action(
        "Lower the per-replica batch (and keep the global batch by accumulating gradients over micro-batches), or "
        "spread the model over more replicas.", "per_replica_batch = global_batch // (strategy.num_replicas_in_sync * k)")),
    # a forward pass or work of no known kind: no backward to recompute in, no gradients to accumulate (h37-memkind36)
    **{f"memory_near_capacity@{tag}": (action(
        "Keep fewer bytes on the GPU: run fewer inputs (or shorter sequences) in each call -- the activations grow "
        "with them, the weights do not -- and keep weights that are not trained in a 16-bit dtype (or split the "
        "model over more GPUs).", "outputs = [model(part) for part in tf.split(batch, 2)]   # half the activations "
        "at a time"),) for tag in ("inference", "any_work")},
}

#: Seeing the host's own code that no event records (Keras's Python between batches, a callback, the loop's own code):
#: the profiler's Python tracer writes each Python call as a host event, and named ranges mark suspect code.
RECORD_PYTHON = action(
    "Record the host's own Python code: turn on the profiler's Python tracer (python_tracer_level=1), or mark the "
    "suspect code with tf.profiler.experimental.Trace ranges; then profile again and read the calls that fill the "
    "GPU's idle.",
    "options = tf.profiler.experimental.ProfilerOptions(host_tracer_level=2, python_tracer_level=1)\n"
    "tf.profiler.experimental.start(logdir, options=options)\n"
    "model.fit(ds, epochs=1, steps_per_epoch=10)   # or a few steps of the custom loop\n"
    "tf.profiler.experimental.stop()\n"
    "with tf.profiler.experimental.Trace('log_metrics'):   # around code you suspect\n"
    "    log_metrics(loss)")

#: The tf.data pipeline's own levers against an input wait, apart: a trace that shows one in use (its iterators,
#: ``APPLIED_MARKERS``) is told the other, not both (h37-survey68: Keras's ``ParallelMapV2`` in every ECBM4040 T4
#: session, told "parallelize and prefetch").
TF_DATA_PARALLEL = action(
    "Make the tf.data pipeline's per-element work parallel: map with num_parallel_calls=tf.data.AUTOTUNE (and "
    "interleave file reads the same way); see the tf.data performance guide.",
    "ds = ds.map(preprocess, num_parallel_calls=tf.data.AUTOTUNE)")
TF_DATA_PREFETCH = action(
    "Prefetch batches, so the next one is made while the GPU runs this one: end the tf.data pipeline with prefetch.",
    "ds = ds.batch(batch_size).prefetch(tf.data.AUTOTUNE)")
#: The next lever where the pipeline is parallel or prefetching already and the GPU still waits: each batch made for
#: less, and tf.data's work off the threads the step's ops run on (its captured functions run on TensorFlow's
#: inter-op threads unless it has its own pool: h37-survey68's ``GatherV2`` queued before the step's next op).
TF_DATA_CHEAPER = action(
    "Make each batch cheaper to produce: batch before the map so one vectorized call makes a whole batch, cache() "
    "the batches where the data fits (later epochs read them made), and give tf.data its own threads "
    "(private_threadpool_size) so its functions do not queue behind the step's ops.",
    "ds = (tf.data.Dataset.from_tensor_slices((x, y))\n"
    "        .batch(batch_size)                                   # one call per batch, not per element\n"
    "        .map(preprocess_batch, num_parallel_calls=tf.data.AUTOTUNE)   # keep it parallel\n"
    "        .cache()                                             # if the data fits\n"
    "        .prefetch(tf.data.AUTOTUNE))                         # keep prefetching\n"
    "options = tf.data.Options()\n"
    "options.threading.private_threadpool_size = 8               # tf.data's own threads, not the step's\n"
    "ds = ds.with_options(options)")


FIXES = {
    **MEMORY_FIXES,
    "step_gaps:unrecorded": (RECORD_PYTHON,),
    "allocator_churn": (action("Use TensorFlow's asynchronous allocator, which reuses freed memory in stream order "
                               "instead of calling the driver.", "export TF_GPU_ALLOCATOR=cuda_malloc_async"),),
    "dtype_casts": (action("Let the mixed-precision policy cast each variable once per step (Keras keeps a float32 "
                           "variable and casts it on read: enable XLA so the casts fuse into their consumers).",
                           "tf.keras.mixed_precision.set_global_policy('mixed_bfloat16')\n"
                           "model.compile(..., jit_compile=True)"),),
    # a GPU without bf16 Tensor Cores (V100, T4): the float16 policy, whose loss scaling Keras adds itself
    "dtype_casts:fp16": (action("Let the mixed-precision policy cast each variable once per step (Keras keeps a "
                                "float32 variable and casts it on read: enable XLA so the casts fuse into their "
                                "consumers).",
                                "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
                                "model.compile(..., jit_compile=True)"),),
    "comm_exposed": (TF_COMM_OVERLAP,),
    "comm_exposed:paced": (TF_COMM_OVERLAP,),
    # each lever apart, so a trace that shows one in use is told the other (``APPLIED_MARKERS``), then the next
    "input_bound": (
        TF_DATA_PREFETCH, TF_DATA_PARALLEL, TF_DATA_CHEAPER,
        action("Confirm: run the same model on synthetic in-memory data that needs no preprocessing; if it is "
               "much faster, the input pipeline is the bottleneck.",
               "ds = tf.data.Dataset.from_tensors((x_batch, y_batch)).repeat()  # synthetic: no I/O, no preprocessing\n"
               "model.fit(ds, steps_per_epoch=100)"),
    ),
    # the batch was made in time; the GPU waits for its transfer (survey h37-survey18)
    "input_bound:transfer": (
        action("The batches are ready; the GPU waits for each one's copy to the device: prefetch to the GPU so the "
               "next batch's copy overlaps this step's compute.",
               "ds = ds.apply(tf.data.experimental.prefetch_to_device('/gpu:0'))\n"
               "# or, distributed: strategy.experimental_distribute_dataset(ds)  (prefetches to each device)"),
    ),
    "host_op_placement": (
        action("Log where every op is placed (first statement of the program) and look for compute-heavy ops on "
               "the CPU; some ops (e.g. tf.unique) override the requested device.", LOG_PLACEMENT),
        action("Make placement deterministic with a distribution strategy.",
               "strategy = tf.distribute.OneDeviceStrategy(device=\"/gpu:0\")\nwith strategy.scope():\n"
               "    model = build_model()"),
    ),
    "excessive_memcpy": (action("Keep tensors on the GPU between ops; check placement.", LOG_PLACEMENT),),
    "excessive_memcpy:host_device": (action(
        "Find the ops that bounce tensors between host and GPU (look at the ops around each copy, same place every "
        "step) and keep them on the GPU; avoid .numpy()/print of tensors inside the step.", LOG_PLACEMENT),),
    "excessive_memcpy:h2d": (action("Overlap input copies with compute by prefetching to the GPU.",
                                    "ds = ds.prefetch(tf.data.AUTOTUNE)   # where it is not there already\n"
                                    "ds = ds.apply(tf.data.experimental.prefetch_to_device('/gpu:0'))"),),
    "step_gaps:shared_threads": (action(
        "Launch kernels from dedicated GPU threads so they do not queue behind tf.data threads "
        "(no tf_gpu_private_* threads in this capture).", "export TF_GPU_THREAD_MODE=gpu_private", "shell"),),
    "step_gaps:private_threads": (action(
        "The capture already uses TF_GPU_THREAD_MODE=gpu_private; try more launch threads per GPU.",
        "export TF_GPU_THREAD_COUNT=4", "shell"),),
    "mixed_precision_off": (action(
        "Enable Keras mixed precision (first statement, before building the model); keep a standalone "
        "softmax/final output in float32.",
        "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
        "# last layer: tf.keras.layers.Activation('softmax', dtype='float32')"),),
    "tensor_core_unused": (action("Enable mixed precision so GEMM/conv kernels can use fp16 Tensor Cores.",
                                  "tf.keras.mixed_precision.set_global_policy('mixed_float16')"),),
    "tensor_core_unused:tf32": (action(
        "On Ampere and newer, fp32 matmuls can use TF32 Tensor Cores; make sure it is not disabled.",
        "tf.config.experimental.enable_tensor_float_32_execution(True)"),),
    "loss_scaling_gaps": (
        action("Use static loss scaling with a scale that keeps fp16 gradients from underflowing/overflowing "
               "(validate convergence: a wrong value loses accuracy).",
               "opt = tf.keras.mixed_precision.LossScaleOptimizer(opt, dynamic=False, initial_scale=1024)"),
        action("Or run the step under jit_compile=True so the scale update runs on the GPU inside the cluster.",
               "model.compile(optimizer=opt, loss=loss, jit_compile=True)"),
    ),
    "batch_size_headroom": (action(
        "Raise the (per-replica) batch size until peak memory nears capacity; check convergence "
        "(learning rate scaling).", "global_batch = per_replica_batch * strategy.num_replicas_in_sync"),),
    "allreduce_extra": (
        action("Reduce all gradients in one packed NCCL call.",
               "strategy = tf.distribute.MirroredStrategy(\n"
               "    cross_device_ops=tf.distribute.NcclAllReduce(num_packs=1))"),
        action("Look for per-step cross-replica reductions besides the gradients (metrics or losses reduced with "
               "strategy.reduce / ReplicaContext.all_reduce every step) and do them every N steps."),
    ),
    "gpu_imbalance": (
        action("Look for ops pinned to {gpu} (explicit tf.device, variables or metrics created outside "
               "the strategy scope, host->GPU0 copies of the whole batch).", LOG_PLACEMENT),
        action("Create the model, optimizer and metrics inside the strategy scope and distribute the dataset.",
               "strategy = tf.distribute.MirroredStrategy()\nwith strategy.scope():\n    model = build_model()\n"
               "    model.compile(...)\ndist_ds = strategy.experimental_distribute_dataset(ds)"),
    ),
    "launch_skew:shared_threads": (
        action("Give every GPU its own launch threads (2 per GPU by default, usually enough).",
               "export TF_GPU_THREAD_MODE=gpu_private", "shell"),
        _TF_DATA_THREADS,
    ),
    "launch_skew:private_threads": (
        action("The capture already uses gpu_private launch threads; raise their count per GPU.",
               "export TF_GPU_THREAD_MODE=gpu_private\nexport TF_GPU_THREAD_COUNT=4", "shell"),
        _TF_DATA_THREADS,
    ),
}


def _capture_fixes(loop: Loop, advice: str) -> dict[str, tuple[Action, ...]]:
    """The capture-quality fixes of :func:`looped_fixes`: each ends in ``advice``, the job's own profiling code, and
    names Keras' ``profile_batch`` only where the job's capture is Keras' (``loop.keras_capture``).  Apart from the
    step's fixes because they answer how the window was taken, not what the step does."""
    return {
        "capture_quality": (action("Profile a short steady-state window instead of the whole run.", advice),),
        "capture_quality:unseen": (action(
            "Profile whole steps, so the GPU work the host waits for is in the profile: start the profiler before a "
            "step begins and stop it after a later step has finished; if the GPU still sits idle there, another "
            "process shares it (nvidia-smi lists each GPU's processes).", advice),),
        "capture_quality:before_capture": (action(
            "Start the profiler between steps, with the GPU done with the earlier ones, so the window holds whole "
            "steps and none of the work before it" + (": a profile_batch range after warm-up starts it at a step's "
                                                       "start." if loop.keras_capture else
                                                       ": start it before a step, after the earlier steps' results "
                                                       "were read."), advice),),
        "capture_quality:no_gpu": (action(f"Check that TensorFlow sees the GPU, then profile steady-state "
                                          f"{loop.noun}s.", "print(tf.config.list_physical_devices('GPU'))\n" + advice),),
        "capture_quality:gpu_unused": (action(
            "Check where the ops run (tf.debugging.set_log_device_placement(True); a tf.device('/CPU:0') scope, or "
            "tf.config.set_visible_devices hiding the GPU, keeps them off it), then profile steady-state "
            f"{loop.noun}s.", "tf.debugging.set_log_device_placement(True)   # each op's device, logged\n" + advice),),
        "capture_quality:input_on_cpu": (action(
            "The profiled block only iterated the dataset, and no model ran on its batches: run the " + loop.noun +
            " on each batch between tf.profiler.experimental.start and stop" +
            (", or profile fit's batches after warm-up (profile_batch)" if loop.keras_capture else "") + ".",
            advice),),
        "capture_quality:copy_only": (action(
            "The profiled window held transfers and no kernel: where a model runs after them, profile a range of "
            "batches after warm-up" + (" (profile_batch)" if loop.keras_capture else "") + ", or start and stop the "
            "profiler around steps that run on the GPU.", advice),),
        "capture_quality:window": (action(
            "The profiled window held no GPU work: profile a range of batches after warm-up" +
            (" (profile_batch)" if loop.keras_capture else "") + ", or start and stop the profiler around steps that "
            "run on the GPU.", advice),),
        # compiled graphs that ran with none of their ops recorded (``job.kind._ops_unrecorded_window``): the host
        # tracer's op records and the GPU tracer's (CUPTI) both missing
        "capture_quality:ops_unrecorded": (action(
            "Profile again with the op and GPU tracers on: ProfilerOptions(host_tracer_level=2, "
            "device_tracer_level=1), and check the log for CUPTI errors (libcupti on LD_LIBRARY_PATH; in a "
            "container, the GPU profiling permission) -- the graphs ran, but none of their ops was recorded.",
            "# pass these options to tf.profiler.experimental.start(logdir, options=options):\n"
            "options = tf.profiler.experimental.ProfilerOptions(host_tracer_level=2, device_tracer_level=1)\n"
            + advice),),
        # XLA-compiled graphs (``jit_compile=True``) that ran on the GPU with none of their kernels recorded
        # (``job.kind._kernels_unrecorded_window``): the GPU tracer's (CUPTI) records missing
        "capture_quality:kernels_unrecorded": (action(
            "The XLA-compiled graphs ran on the GPU, but none of their kernels was recorded: profile again with the "
            "GPU tracer on (ProfilerOptions(device_tracer_level=1)) and check the log for CUPTI errors (libcupti on "
            "LD_LIBRARY_PATH; in a container, the GPU profiling permission).",
            "# pass these options to tf.profiler.experimental.start(logdir, options=options):\n"
            "options = tf.profiler.experimental.ProfilerOptions(host_tracer_level=2, device_tracer_level=1)\n"
            + advice),),
        "capture_quality:few_steps": (action(
            "Profile a window of a few dozen steps after warm-up (about ten seconds), and mark steps (" +
            ("Keras does; custom loops: " if loop.keras_capture else "") +
            f"tf.profiler.experimental.Trace('{loop.trace}', step_num=s, _r=1)).", advice),),
        "capture_quality:unsteady": (action("Skip warm-up and evaluation/checkpoint steps in the profiled window.",
                                            advice),),
        # a session TF 2.2 saved as tool data and its trace viewer JSON (capture_quality's ``not_kept``): the XPlane
        # that keeps the GPU's properties, launch configurations and allocator records is written from TF 2.3 on
        "capture_quality:not_kept": (action(
            "Profile again on TensorFlow 2.3 or later: its profiler writes the whole capture as <host>.xplane.pb "
            "beside the trace viewer JSON (the GPU's name and properties, each kernel's launch configuration, the "
            "allocator's records), and the Advisor reads that.", "# pip install 'tensorflow>=2.3'\n" + advice),),
    }


def looped_fixes(loop: Loop) -> dict[str, tuple[Action, ...]]:
    """The fixes whose code defines or runs the job's step or quotes the capture advice, composed for one job
    (``Framework.looped``)."""
    advice = capture(loop)
    return {
        **_capture_fixes(loop, advice),
        "launch_bound": (tf_function(loop), jit_compile(loop)),
        "host_sync": (action(
            "Keep .numpy(), float(tensor), tf.print to the host and Python conditions on tensor values out of the "
            f"{loop.noun}: each waits for the GPU to finish. Read metrics every N steps.",
            f"{loop.header}\n    {f'{loop.value} = {loop.fn}({loop.params})':<29}# tf.function: stays on the GPU\n"
            f"    if step % 100 == 0:\n        {f'print(float({loop.value}))':<30}# one sync per 100 steps"),
            steps_per_execution(loop)),
        # a step of a few eager calls too small for their dispatch: one graph of the step first -- each op run eagerly
        # costs the eager runtime's tens of microseconds, a graph's executor a few (said only where the trace shows
        # no graph run: ``FIX_APPLIED``) --, then several steps per call (h37-dispatch68)
        "launch_bound:step": (tf_function(loop), steps_per_execution(loop)),
        # a step too small for its host cost that reads a result back in every turn (``launch_bound.sync_fixes``)
        "launch_bound:step_sync": (sync_after_loop(loop),),
        # the wait comes before graph replays (XLA's command buffers): the host's preparation of each call, not a
        # launch per op -- tf.function and jit_compile are what replays them already (h37-review11)
        "launch_bound:replay": (steps_per_execution(loop),),
        "step_gaps:host_work": (
            steps_per_execution(loop),
            action("Keep per-step Python work (logging, .numpy() calls, metric updates) out of the step, "
                   "or do it every N steps."),
        ),
        "eager_execution": (
            action(f"Wrap the {loop.noun} in tf.function ({loop.keras} unless run_eagerly=True).",
                   loop.define(body=loop.body)),
            action("Check that eager mode is not forced.",
                   "model.compile(..., run_eagerly=False)\ntf.config.run_functions_eagerly(False)"),
        ),
        "excessive_memcpy:d2d": (action(
            "Copies on the device come from layout changes (NHWC/NCHW transposes) and concatenations (tf.concat): keep "
            "one data format end to end and compile the step with XLA, which fuses the copies into the kernels around "
            "them.", loop.define("@tf.function(jit_compile=True)")),),
        "xla_not_used": (
            action("Compile the step with XLA (enable it alone and verify the gain; avoid it with variable input "
                   "shapes, which recompile for every new shape).",
                   loop.define("@tf.function(jit_compile=True)") + "\n# Keras: model.compile(..., jit_compile=True)"),
            action("Or turn on auto-clustering for the whole program (2 = more aggressive; use 1 when memory is "
                   "tight).", "export TF_XLA_FLAGS=--tf_xla_auto_jit=2", "shell"),
        ),
        "sequential_gpus": (
            action("Run the replica step with strategy.run (not a Python loop over devices) and remove cross-replica "
                   "dependencies such as reading one replica's result in another.",
                   f"per_replica_{loop.value} = strategy.run({loop.fn}, args=(batch,))"),
            action("If the model code has no such dependency, report the trace upstream (TensorFlow GitHub issues), "
                   "as the guide asks."),
        ),
    }


def loop_for_job(tags: tuple[str, ...]) -> tuple[str, dict[str, tuple[Action, ...]]]:
    """The capture advice and looped fixes for a job's tags (``Framework.looped``): an inference step for an
    inference job, a step of its own for work of no known kind (``any_work``), else the training step; the capture
    advice and the capture fixes quoting it in the same loop."""
    loop = job_loop(tags, TRAINING_LOOP, INFERENCE_LOOP, ANY_LOOP)
    return capture(loop), looped_fixes(loop)


FIXES.update(looped_fixes(TRAINING_LOOP))
CAPTURE = capture(TRAINING_LOOP)


def is_function_call(name: str) -> bool:
    """A tf.function's graph run: TF 2.16+'s ``FunctionRun``, older versions' call of the traced function
    (``EagerExecute: __inference_train_function_1127``; survey h37-survey18: Keras ``fit`` on TF 2.4).  Its ops run
    in the graph executor, not one by one: "run the step as a graph" is then no fix (``APPLIED_MARKERS``)."""
    return name == "FunctionRun" or "__inference_" in name


#: What TensorFlow's eager runtime records for each op or tf.function it runs for the program's Python, one per call,
#: followed by the op type or the function's name (inside an ``EagerExecute`` call; TF 2.21's
#: tests/fixtures/real/tf221_cpu_custom_loop: ``EagerLocalExecute: __inference_train_step_2361`` around each step's
#: ``FunctionRun``, ``EagerLocalExecute: IteratorGetNext`` for ``next(iterator)``; tf221_cpu_keras3_fit_mixed:
#: ``EagerLocalExecute: _EagerConst`` under ``tf.constant``, ``LogicalAnd``, ``WriteSummary``).  The TF 2.4 graph
#: steps of the V100 BERT capture record none (their ops run in the graph executor).
EAGER_CALL = "EagerLocalExecute: "


def is_step_call(name: str) -> bool:
    """A call of the program's Python into TensorFlow's eager runtime (``EAGER_CALL``): an op run eagerly, or a
    tf.function's graph run -- the step's dispatch, where TF names no dispatch of compiled work of its own
    (``Framework.step_calls``) -- less the input pipeline's (``IteratorGetNext``, Keras' ``OptionalGetValue``): their
    time is the input wait, not the step's dispatch.

    Why: TF's dispatch was counted as none, so a loop of a few eager ops on tiny tensors, whose host calls cost more
    than the GPU's work, never read as too small for its dispatch, and the sync-once words written for TF
    (``launch_bound:step_sync``) reached no report (h37-native67 *Left*; h37-dispatch68)."""
    if not name.startswith(EAGER_CALL):
        return False
    op = name[len(EAGER_CALL):]
    return not (is_input_event(op) or is_host_only_op_type(op))


def is_step_wait(name: str) -> bool:
    """An eager call that runs a tf.function's graph (``EAGER_CALL`` of an ``__inference_`` function): the Python
    thread sits in it while the graph's executor runs every op of the step on its own threads, its waits for the GPU
    included (tf221_cpu_custom_loop: ``EagerLocalExecute: __inference_train_step_2361`` spans 1.49 ms around a 64 us
    ``FunctionRun``), so it counts as a call and its time never as the host's dispatch cost
    (``Framework.step_call_wait``): a GPU-bound graph step would read as too small for its dispatch."""
    return name.startswith(EAGER_CALL) and is_function_call(name)


#: What TensorFlow's CUPTI tracer records on the host for a copy from the device: the copy call, named by its kind,
#: on the thread that made it (``MemcpyD2H``).
_HOST_READ = "MemcpyD2H"


def is_eager_read(name: str) -> bool:
    """The program reading a GPU tensor's value into host memory from Python (``loss.numpy()``, ``float(loss)``,
    printing a tensor; Keras's per-batch read of its logs): as TF 2.3 records it on a V100 (mholmeslinder/
    semi-supervised-cv ``logs/scalars/20201216-223130``, h37-copy69), nothing while the Python thread waits for the
    GPU's queue to drain -- 93 ms there, the GPU busy with the step's work -- then a 38 us ``MemcpyD2H`` on the Python
    thread, in no op, 103 us after the GPU's last kernel, its 2 us copy on the D2H stream inside it.  A graph's own
    copies to the host are the same name inside its executor's ops: a read counts only where none of
    :func:`is_read_holder` holds it.  A sync the program asked for (``metrics.syncs``)."""
    return name == _HOST_READ


def is_read_holder(name: str) -> bool:
    """A host event inside which a ``MemcpyD2H`` is TensorFlow's own copy, not the program's read: the eager runtime's
    and the graph executor's wrappers and function runs (:data:`HOST_MARKERS`), an op, Keras's compiled step function
    -- not a step marker (``tf.profiler.experimental.Trace('train', step_num=...)``, which holds the program's own
    reads)."""
    return name.startswith(HOST_MARKERS) or is_tf_op_event(name) or is_step_function(name)


#: A tf.data iterator of a stage that makes elements on several threads, as the profiler names each iterator: the
#: chain from the root (``Iterator::Model::ParallelMapV2``, ``Iterator::Root::Prefetch::MapAndBatch``).
_TF_DATA_PARALLEL = re.compile(r"^Iterator::(?:\S+::)?(?:ParallelMap|ParallelInterleave|ParallelBatch|MapAndBatch|"
                               r"ParallelFilter|LegacyParallelInterleave)")
#: A tf.data prefetch stage's iterator (``Iterator::Model::Prefetch``; not ``PrefetchToDevice``'s, a copy's).
_TF_DATA_PREFETCH = re.compile(r"^Iterator::(?:\S+::)?Prefetch(?:::|$)")


def is_parallel_iterator(name: str) -> bool:
    """A tf.data iterator of a parallel stage (a map with ``num_parallel_calls``, a parallel interleave or batch)."""
    return bool(_TF_DATA_PARALLEL.match(name))


def is_prefetch_iterator(name: str) -> bool:
    """A tf.data iterator of a ``prefetch`` stage."""
    return bool(_TF_DATA_PREFETCH.match(name))


#: Fixes a trace shows in use: the step already runs as a tf.function graph; the tf.data pipeline already maps in
#: parallel, or prefetches (its iterators' events, which the profiler records on tf.data's threads).
APPLIED_MARKERS = {"graph": (("the step as a tf.function graph (graph runs in the trace: `FunctionRun`, "
                              "`__inference_*`)"), is_function_call, never),
                   "tf_data_parallel": (("a parallel tf.data stage (the iterator of a map, interleave or batch "
                                         "run on several threads, in the trace)"), is_parallel_iterator, never),
                   "tf_data_prefetch": ("tf.data prefetch (its `Prefetch` iterators in the trace)",
                                        is_prefetch_iterator, never)}
FIX_APPLIED = {TF_FUNCTION.text: "graph", TF_DATA_PARALLEL.text: "tf_data_parallel",
               TF_DATA_PREFETCH.text: "tf_data_prefetch"}
#: The next lever, given only where the trace shows one it follows in use: cheaper batches follow a parallel or
#: prefetching pipeline (beside neither, the two come first and are enough to say).
FIX_FOLLOWS = {TF_DATA_CHEAPER.text: ("tf_data_parallel", "tf_data_prefetch")}


#: Ops only training runs: the gradient tape's ops, graph-mode gradients, the optimizers' update ops.
_TRAINING = re.compile(r"gradient_tape/|(^|/)gradients/|ResourceApply|Apply(Adam|GradientDescent|Momentum|RMSProp|Adagrad)|"
                       r"(^|/)(Adam|AdamW|AdamWeightDecay|SGD|LAMB)/")
#: XLA compiling a cluster (``jit_compile=True`` or auto-clustering): one-time.
_COMPILING = ("XlaCompile", "_XlaCompile", "XlaCompileOnDemand")


_INFERENCE = re.compile(r"predict_function|serving_default|signature_wrapper")


def is_inference_event(name: str) -> bool:
    return bool(_INFERENCE.search(name))


#: Op types only a backward pass or an optimizer's update runs, whatever scope the program gave them: the gradients
#: TF's registered gradient functions compute (``ReluGrad``, ``BiasAddGrad``, ``FusedBatchNormGradV3``,
#: ``TanhGrad``, ``Conv2DBackpropFilter``, ``MaxPoolGrad``) and the optimizers' kernels (``ResourceApplyAdam``,
#: ``ApplyGradientDescent``, ``ResourceSparseApplyAdagradV2``).  An eager step's ops carry no ``gradient_tape/``
#: scope, so their types are the only names of its backward there.  Never ``StopGradient`` / ``PreventGradient``
#: (forward ops that block a gradient) nor ``BroadcastGradientArgs`` (a shape op).
_GRADIENT_TYPE = re.compile(r"^(?:\w*Backprop\w*|\w+Grad(?:Grad)?(?:V\d+)?|(?:Resource)?(?:Sparse)?Apply[A-Z]\w*)$")
#: Op types that run a compiled XLA cluster (``jit_compile=True``, auto-clustering): the cluster's own ops -- a
#: backward's among them -- are not recorded as TF ops, so the ops recorded beside one are not the whole step's.
_CLUSTER_TYPE = re.compile(r"^_?Xla(?:Run|Launch(?:V\d+)?|Compile|Merge)$")


def is_training_event(name: str) -> bool:
    """A host event only training runs (:data:`_TRAINING`'s scopes and optimizers; an op of a gradient's or an
    update's type, :data:`_GRADIENT_TYPE`)."""
    return bool(_TRAINING.search(name)) or (is_tf_op_event(name) and bool(_GRADIENT_TYPE.match(op_type(name))))


def is_recorded_op(name: str) -> bool:
    """A TF op the profiler recorded one by one -- a graph's op inside its ``FunctionRun``, an eager op -- that does
    the model's work: not the input pipeline's, a host-only type, a function call, a compiled cluster's run or the
    runtime's bookkeeping (``Framework.autograd_op``).  Why: a training step records its gradient ops beside such ops
    (``gradient_tape/...``, :data:`_GRADIENT_TYPE`), so such ops recorded with no training event are a forward pass;
    a TF forward loop whose steps the program marked ``train`` read "no host event says what the GPU work was for",
    the TF ops of its four dense layers recorded (h37-kind69 *Left* 1)."""
    if not is_tf_op_event(name) or is_input_event(name) or is_function_call(name) or is_bookkeeping(name):
        return False
    t = op_type(name)
    return not is_host_only_op_type(t) and not _CLUSTER_TYPE.match(t) and not t.startswith(_COMPILING)


def is_cluster_run(name: str) -> bool:
    """A TF op that runs a compiled XLA cluster (:data:`_CLUSTER_TYPE`): its ops, a backward's among them, are not
    recorded one by one (``Framework.unrecorded_ops_event``)."""
    return bool(_CLUSTER_TYPE.match(name.rsplit(":", 1)[-1]))  # ``cluster_0:_XlaRun``, or the runtime's bare name


def is_compile_event(name: str) -> bool:
    """XLA compiling a cluster: the runtime's bare name (``XlaCompile``), or the compile op as the TF profiler names
    a graph's op, ``scope:Type`` (``cluster_0_1/xla_compile:_XlaCompile``) -- its type, not its scope, says what it
    does (a scoped compile op read as no compile: h37-phase70)."""
    return name.startswith(_COMPILING) or op_type(name).startswith(_COMPILING)


#: Kernels launched with fewer blocks than SMs (``small_grid``): in TensorFlow, ops on tiny tensors.
FIXES["small_grid"] = (action(
    "These kernels run on tensors too small to fill the GPU: give each op more data -- raise the batch size, and "
    "batch per-example work (tf.vectorized_map instead of a Python loop or tf.map_fn), so one kernel covers the batch.",
    "ys = tf.vectorized_map(f, xs)   # one kernel over the batch, not one per example"),)

#: Attention computed op by op (``unfused_attention``): Keras 3's attention layer with its fused path.
FIXES["unfused_attention"] = (action(
    "Compute attention in one fused kernel: Keras 3's MultiHeadAttention runs its fused path when flash attention "
    "is enabled, and compiling the step with XLA (jit_compile=True) fuses the softmax with the ops around it.",
    "keras.config.enable_flash_attention()\n"
    "layer = keras.layers.MultiHeadAttention(num_heads=h, key_dim=d)"),)

#: A Python frame of TensorFlow's own package as a Kineto trace records it (``torch.profiler``'s ``with_stack``:
#: ``.../site-packages/tensorflow/python/eager/polymorphic_function/polymorphic_function.py(833): __call__``): the
#: program called into TensorFlow.  Not Keras's package: Keras 3 runs on JAX and PyTorch too.
_OWN_FRAME = re.compile(r"(?:^|[/\\])tensorflow[/\\][^()]*\.py\(\d+\): ")
#: A kernel TensorFlow's own GPU kernels name (``void tensorflow::functor::ShuffleInTensor3Simple<...>``,
#: ``tensorflow::BiasNHWCKernel``): its ops ran without XLA -- no other framework launches kernels of its namespace.
_OWN_KERNEL = re.compile(r"\btensorflow::")


def is_own_frame(name: str) -> bool:
    """A Python frame in TensorFlow's package (:data:`_OWN_FRAME`): evidence TensorFlow ran the work
    (``Framework.work_frame``), in a capture another framework's profiler wrote (h37-vendor66: XLA's kernels alone no
    longer say which front end compiled them)."""
    return bool(_OWN_FRAME.search(name))


def is_own_kernel(name: str) -> bool:
    """A kernel of TensorFlow's own namespace (:data:`_OWN_KERNEL`): TensorFlow's op ran it (``Framework.work_kernel``)."""
    return bool(_OWN_KERNEL.search(name))


def is_pipeline_event(name: str) -> bool:
    """The input pipeline's own event (``Framework.input_event``): the consumer blocking on tf.data or sending its
    batch (:func:`is_input_event`), or the iterator's ``__next__`` as the Python tracer records it
    (``python_tracer_level=1``, ``xla.is_pipeline_frame``): where no op event of the iterator is recorded around it
    (a host tracer level that records no ops), the frame is the only record of the loop taking its batch."""
    return is_input_event(name) or xla.is_pipeline_frame(name)


FRAMEWORK = Framework(
    id="tensorflow", name="TensorFlow", host_markers=HOST_MARKERS, input_event=is_pipeline_event,
    own_step_marks=own_step_marks, step_marks=PROFILER_STEP_MARKS, step_function=is_step_function,
    # the program's ``tf.profiler.experimental.Trace('get_batch')``: its own words, as a PyTorch program's (issue #37)
    input_range=names_batch, traced_frame=xla.is_python_tracer_event, frame_label=xla.frame_label,
    device_features=DEVICE_FEATURES,
    batch_transfer_event=is_input_send,
    host_op_event=is_tf_op_event, host_only_op_type=is_host_only_op_type, background_line=is_background_line,
    program_backend=xla.executable_backend,
    blocking_read_event=is_eager_read, blocking_read_holder=is_read_holder,
    labels={"cast_cause": "the mixed-precision policy's variables cast from fp32 again on every read, or layers kept "
                          "in fp32 (a dtype='float32' layer between 16-bit ones)",
            "op": "TensorFlow op", "ops": "TensorFlow ops", "ops_short": "TF ops",
            "backward_nodes": "no op of a gradient's type or a `gradient_tape/` scope",
            "ops_table": "Top TensorFlow ops ({kept}, all GPUs)",
            "input_wait_meaning": "share of the {step} the GPU was idle while the host waited in IteratorGetNext (tf.data)",
            "input_next": "tf.data's `IteratorGetNext`",
            "input_function_ops": "the ops of tf.data's own functions (a `map`'s, Keras slicing NumPy arrays into "
                                  "batches, a multi-device iterator fetching each GPU's batch), run on the step's "
                                  "threads",
            "host_op_meaning": "TF ops that launched no GPU work, by count (by time in detail); should be very small",
            "gpu_user": "TensorFlow",
            "compiled_step": "one tf.function graph",
            "dispatch_call": "eager call",  # an op or tf.function run from Python (``step_call_event``)
            "memcpy:levers": "ops kept on the GPU, tensors read with .numpy() once every few {step}s, input prefetched to the "
                             "GPU with tf.data's prefetch_to_device",
            "step_gaps:host_work": "host work between steps (callbacks, metrics, ops outside tf.function)",
            "launch_skew:no_private_threads": "; no tf_gpu_private_* launch threads in the capture",
            "title:host_op_placement": "TensorFlow ops placed on the host",
            "title:eager_execution": "Ops run eagerly, outside tf.function"},
    fixes=FIXES, applied_markers=APPLIED_MARKERS, fix_applied=FIX_APPLIED, fix_follows=FIX_FOLLOWS,
    capture_snippet=CAPTURE,
    memory_record=xla.MEMORY_RECORD,
    writes="xplane", tc_eligible_op=is_tc_eligible_op, elementwise_kernels=ELEMENTWISE_KERNELS,
    update_kernels=(OPTIMIZER_KERNEL,),
    named_kernel_kinds=TRAINING_KERNEL_KINDS,
    not_host_work=is_bookkeeping, runtime_event=is_runtime_event, step_call_event=is_step_call,
    step_call_wait=is_step_wait,
    capture_hint=("Keras: tf.keras.callbacks.TensorBoard(log_dir=LOGDIR, profile_batch=(100, 120))",
                  "custom loop: tf.profiler.experimental.start(LOGDIR); <20 steps>; tf.profiler.experimental.stop()"),
    training_event=is_training_event, compile_event=is_compile_event, cast_ops=("Cast",),
    autograd_op=is_recorded_op, unrecorded_ops_event=is_cluster_run,
    inference_event=is_inference_event, looped=loop_for_job,
    # what shows TensorFlow ran the work in a capture another framework's profiler wrote (``frameworks.detect_work``)
    work_frame=is_own_frame, work_kernel=is_own_kernel,
)
