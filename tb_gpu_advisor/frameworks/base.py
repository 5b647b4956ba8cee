"""What a framework is to the analysis: :class:`Framework`, the fields each framework module fills."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from string import Formatter
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, TypeVar

from tb_gpu_advisor.model.schema import Action

if TYPE_CHECKING:
    import numpy as np

    from tb_gpu_advisor.model.trace import HostEvents

NamePredicate = Callable[[str], bool]


#: how a command line opens: an environment variable set (``export X=``, ``XLA_FLAGS=...``), a script's ``#!``, or a
#: command-line tool a fix runs (a profiler, a GPU's management tool, this advisor, an interpreter or launcher)
_SHELL_START = re.compile(r"^(?:#!|export |unset |[A-Z][A-Z0-9_]*=|(?:nsys|ncu|nvprof|nvidia-smi|rocm-smi|rocprof\w*|xpu-smi|"
                          r"tb-gpu-advisor|pip3?|torchrun|python3?)(?:\s|$))")


def action(text: str, snippet: str | None = None, lang: str | None = None) -> Action:
    """A fix: what to change, and code (or an environment variable) to copy; the language is guessed if not given,
    from its first line of code (comments above it say nothing: ``nsys profile ...`` under a comment is a command)."""
    if snippet is not None and lang is None:
        lines = [ln.strip() for ln in snippet.splitlines() if ln.strip()]
        code = next((ln for ln in lines if not ln.startswith("#") or ln.startswith("#!")), "")
        lang = "shell" if _SHELL_START.match(code) else "python"
    return Action(text=text, snippet=snippet, snippet_lang=lang)  # type: ignore[arg-type]


L = TypeVar("L")


def job_loop(tags: Iterable[str], training: L, inference: L, any_work: L) -> L:
    """The loop of a framework's fixes a job's tags choose (``Framework.looped``): the forward pass's for an
    ``inference`` job, a step of its own for work of no known kind (``any_work``), else the training step's -- one
    rule for every framework's ``Loop``."""
    tags = tuple(tags)
    return inference if "inference" in tags else any_work if "any_work" in tags else training


def as_is(name: str) -> str:
    return name


def no_backend(_: str) -> str:
    """No host event names a compiled program's backend (``Framework.program_backend``)."""
    return ""


def no_step_marks(h: HostEvents) -> np.ndarray:
    """``Framework.own_step_marks`` of a framework whose profiler writes no step mark of the program's: none."""
    import numpy as np

    return np.zeros(len(h), bool)


#: An optimizer's name in lower case as a kernel's name holds it (``fused_adam_kernel``, ``sgd_update``): PyTorch's,
#: Keras's and Optax's optimizers are named alike, so each framework's ``update_kernels`` holds this one fragment.
OPTIMIZER_KERNEL = r"(?i:(?<![a-z])(?:adamw?|sgd|lamb|lion|adagrad|rmsprop|adafactor)(?![a-z]))"


def never(_: str) -> bool:
    """The predicate of a concept the framework does not have."""
    return False


#: A name's words: split at ``_``, ``.``, spaces, ``#`` and case changes (``get_batch``, ``nextBatch``, ``## load_batch
#: ##``), so a word is matched whole -- ``batch_norm``'s ``batch`` is a word, ``onload`` holds no ``load``.
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def words(text: str) -> set[str]:
    """The lower-cased words of ``text`` (:data:`_WORD`)."""
    return {w.lower() for w in _WORD.findall(text)}


#: The words of a range's name that say it holds the batch itself -- fetching it (``get_batch``, ``load_batch``,
#: ``next_batch``, ``fetch``) or its data (``data_load``, a ``DataLoader``).  Narrower than a Python frame's input
#: words (``frameworks.pytorch``): a library's own ranges load, bind and transform its inputs (nvFuser's
#: ``bindInputs``, ``LoadPTX``, ``TransformReplay``) without any batch.  Whatever the framework: a program names its
#: ranges in its own words, ``jax.profiler.TraceAnnotation('get_batch')`` as ``record_function('get_batch')``.
BATCH_WORDS = frozenset(("batch", "batches", "fetch", "data", "dataset", "datasets", "dataloader"))


#: A hook's words: a callback run at a batch's begin or end (Keras's ``on_train_batch_end``, ``on_batch_begin``,
#: Lightning's ``on_train_batch_start``) names the batch it follows or precedes, and fetches nothing -- a callback's
#: logging and metrics between steps (the ``step_gaps_callbacks`` scenario's ``MetricsCallback.on_train_batch_end``).
_HOOK = frozenset(("begin", "end", "start"))


#: A fetch in the words a program gives the loading of its next examples when it does not say "batch" or "data":
#: a verb of fetching followed by what a model consumes (``load_images``, ``read_input``, ``get_next_inputs``,
#: ``prefetch_samples``, ``ReadRecords``, ``readFrame``), in that order -- the verb acting on the noun.  An ordered
#: pair, not either word: ``input_layernorm`` and ``sample_next_token`` (a decode loop's sampling, the model's output)
#: hold a noun or a verb with no fetch; ``load_model`` and ``read_config`` load no examples.
_FETCH_VERBS = frozenset(("load", "read", "fetch", "prefetch", "get", "next", "receive", "recv"))
_FETCH_LINKS = frozenset(("next", "new", "the", "input", "training", "train", "eval", "val"))
_EXAMPLE_NOUNS = frozenset(("input", "inputs", "image", "images", "img", "imgs", "samples", "example", "examples",
                            "record", "records", "frame", "frames", "label", "labels"))


def _names_fetch(name: str) -> bool:
    """The name's words (in order) hold a fetch verb acting on examples (:data:`_FETCH_VERBS` then, past any
    :data:`_FETCH_LINKS`, one of :data:`_EXAMPLE_NOUNS`)."""
    seq = [w.lower() for w in _WORD.findall(name)]
    for i, w in enumerate(seq):
        if w not in _FETCH_VERBS:
            continue
        j = i + 1
        while j < len(seq) and seq[j] in _FETCH_LINKS and seq[j] not in _EXAMPLE_NOUNS:
            j += 1
        if j < len(seq) and seq[j] in _EXAMPLE_NOUNS:
            return True
    return False


def names_batch(name: str) -> bool:
    """A range of the program's whose name says it fetches its batch (:data:`BATCH_WORDS`), or fetches examples in
    other words (:func:`_names_fetch`: a native program's ``load_images``, ``read_input``), no callback hook at a
    batch's begin or end (:data:`_HOOK`).  Asked only of the ranges the program marks itself
    (``user_ranges.program_ranges``): a framework's own event is never one."""
    w = words(name)
    return bool(w & BATCH_WORDS or _names_fetch(name)) and not ("on" in w and w & _HOOK)


#: ``Framework.device_features``: the fix stands without the lines of its code that name the feature.
WITHOUT_LINE = "without the line"


@dataclass(frozen=True)
class Spelled:
    """``Framework.device_features``: the fix stands with its line that names the feature given whole as ``line`` (at
    that line's indent) -- the form every version the trace could be accepts (``scaler = torch.cuda.amp.GradScaler()``
    where ``torch.amp.GradScaler('cuda')``, PyTorch 2.3 on, is not dated).  A line the framework writes, not words
    replaced in one."""
    line: str


@dataclass(frozen=True)
class Noted:
    """``Framework.device_features``: the fix stands with ``note`` as a comment above its first line that names the
    feature -- where no one spelling fits every version the trace could be, both, with the version named."""
    note: str

@dataclass(frozen=True)
class StepMarks:
    """``Framework.step_marks``: host events a framework's profiler writes at each step's boundary under names of its
    own, and how the steps call the reading they give -- ``source`` (``steps.types.Detection.source``) and ``note``
    (in words).  ``events``: bool per host event, a mark; the steps group the marks by ``step_num`` (in order where
    they carry none)."""
    source: str
    note: str
    events: "Callable[[HostEvents], np.ndarray]"


@dataclass(frozen=True)
class Framework:
    """What one framework's captures look like, and how to talk to its users."""

    id: str  # "tensorflow" | "jax" | "unknown" (reported as capture.framework)
    name: str  # "TensorFlow"
    #: host event name prefixes only this framework writes (detection)
    host_markers: tuple[str, ...] = ()
    #: ``/host:metadata`` plane stats only this framework writes (detection, preferred to markers)
    metadata_stats: tuple[str, ...] = ()
    #: the host waits for the next batch (TF ``IteratorGetNext``)
    input_event: NamePredicate = never
    #: an input event of a pipeline that already prepares batches in parallel with the step (PyTorch's DataLoader
    #: with worker processes, ``_MultiProcessingDataLoaderIter``): a wait there is workers too slow, not workers off
    parallel_input: NamePredicate = never
    #: an op that makes a new tensor from nothing but its arguments (random numbers, constants, a range): where one
    #: fills the GPU's idle on the host, the tensor was made on the CPU and could be made on the GPU instead
    creation_op: NamePredicate = never
    #: a range or Python frame of the program's whose own name says it fetches or prepares the batch (``get_batch``,
    #: ``next_batch``, a pipeline's ``preprocess``, a tokenizer's call): where it holds host time before a step's first
    #: launch, that time is the program making its input (issue #37 item 4); a frame naming none is other host work
    input_frame: NamePredicate = never
    #: a range the program marks (``record_function``, NVTX) whose name says it fetches the batch (``get_batch``,
    #: ``## load_batch ##``, ``data_load``): where no kernel is launched inside, it is the input pipeline's own event
    input_range: NamePredicate = never
    #: a Python frame's name as the report says it (PyTorch ``with_stack``'s ``path/file.py(123): func`` as ``func``
    #: (file.py:123)); as recorded where the framework writes no frames
    frame_label: Callable[[str], str] = as_is
    #: a host event that is a frame the profiler's Python tracer recorded (JAX's and TensorFlow's
    #: ``python_tracer_level=1``: ``$dataset_ops.py:4734 __next__``): where one is the input pipeline's own event
    #: (``input_event``), the finding names it as recorded by the Python tracer (``HostInput.own_frame``)
    traced_frame: NamePredicate = never
    #: the host puts a batch on the device outside any dispatch (JAX ``device_put``)
    transfer_event: NamePredicate = never
    #: a host->device copy of array data wherever it runs, inside a dispatch too (an implicit copy of a NumPy
    #: batch passed to a jitted function; JAX ``H2D Dispatch`` worker events); scalar copies are not batches
    batch_transfer_event: NamePredicate = never
    #: the host is inside the framework's dispatch of compiled work (JAX ``PjitFunction(f)``)
    dispatch_event: NamePredicate = never
    #: each dispatch event is the call of one compiled program that launches its work (JAX's jitted call), so host time
    #: inside one in the gaps between steps is the next call's dispatch; False where the events are eager ops, some of
    #: them work of the host's own that launches nothing (PyTorch's ``aten::`` ops: a CPU ``aten::copy_`` between two
    #: turns is the loop's own op, not the next turn's dispatch -- h37-calls67, ``write_tiny_turns(tail_op=...)``)
    dispatch_is_compiled: bool = False
    #: the host's calls that are a step's dispatch where the framework records no dispatch of compiled work
    #: (``dispatch_event`` is ``never``): a program with no ML framework dispatches its GPU work by the runtime's own
    #: calls -- its launches, copies and syncs -- so a loop of one kernel and a ``cudaDeviceSynchronize`` a turn is two
    #: dispatch calls a step, as a loop of one jitted call is one (``metrics.Dispatch`` counts them: h37-native67)
    step_call_event: NamePredicate = never
    #: those of the ``step_call_event`` calls that wait for the GPU (a sync, a copy that holds the host): counted as
    #: calls, their time never as the host's dispatch cost -- the GPU works while the host sits in them
    step_call_wait: NamePredicate = never
    #: a framework op that may be placed on the host or the GPU (TF ``name:Type`` op events)
    host_op_event: NamePredicate = never
    #: the backend a compiled program's host event names ("GPU", "CPU"; "" where it names none): XLA's executables
    #: (``frameworks.xla.executable_backend``) -- where a window holds the programs' runs and none of their work, what
    #: says where the work ran (``job.kind._kernels_unrecorded_window``)
    program_backend: "Callable[[str], str]" = no_backend
    #: the least bytes the framework's allocator reserves from the driver to hold blocks of the given sizes at once,
    #: given the largest request its history records (its segment rounding: no split block, no fragmentation); None
    #: where its segment sizes are not known (``metrics.memory._least_reserve``)
    least_reserve: "Callable[[np.ndarray, int], int] | None" = None
    #: (the most bytes its allocator asks the driver for at once to serve a request, the unit the driver's memory
    #: serves it in), given the request and whether segments are expandable; None where not known
    #: (``rules.oom_snapshot.cause_of``)
    driver_ask: "Callable[[int, bool], tuple[int, int]] | None" = None
    #: an op type (``op_type``) that runs only on the host, wherever its graph is placed: nothing to move to the GPU
    #: (TF's tf.data iterators, ``RemoteCall``, a collective's host side)
    host_only_op_type: NamePredicate = never
    #: host threads whose events are background work, never the step's critical path
    background_line: NamePredicate = never
    #: the framework's own step annotation spanning a whole step (PyTorch ``ProfilerStep#N``): no host work itself
    step_marker: NamePredicate = never
    #: bool per host event: a step mark the program placed around each of its iterations, whatever its name, as the
    #: framework's profiler writes it (TensorFlow's and JAX's ``_r`` roots numbered by ``step_num``:
    #: ``tensorflow.own_step_marks``); none where it writes no such mark (``job.kind._marked_training_steps``)
    own_step_marks: Callable[[HostEvents], np.ndarray] = no_step_marks
    #: the step marks its profiler writes under names of its own, in the order the steps try them, before
    #: ``own_step_marks`` (TensorFlow's, which JAX's and PyTorch/XLA's XPlanes share: Keras 3's ``Profiled batch``, the
    #: ``train``/``test`` roots, ``TraceContext``: ``steps.markers._host_candidates``); none where it writes none
    step_marks: tuple[StepMarks, ...] = ()
    #: a call of its compiled step function (Keras' ``train_function``, ``multi_step_on_iterator``): it runs the step's
    #: graph, so what the host launches after the last one returned is no part of a step
    #: (``steps.markers._last_step_mark_end``)
    step_function: NamePredicate = never
    #: what the program's own ranges are called where the framework's format keeps them among its ops
    #: (``Trace.annotations``: PyTorch's ``record_function`` ranges in Kineto's trace), in words; asked through
    #: ``frameworks.ranges_word`` alone (the steps' notes and labels, ``job.kind._annotated_training_steps``)
    annotation_ranges: str = "annotations"
    #: N of a step mark that numbers the steps the profiler counted before it (PyTorch ``ProfilerStep#N``: prof.step()
    #: counts from 0), -1 for a name that numbers none: how many steps a loop ran before the mark's step
    step_number: Callable[[str], int] = lambda _n: -1
    #: an op that only hands out a tensor (PyTorch ``aten::empty``, ``aten::zeros``, ``aten::zero_``): no work of the
    #: program's own -- the handles ``record_function`` makes for its ranges in PyTorch 1.8-1.10 are such ops
    factory_op: NamePredicate = never
    #: a Python frame of the framework's profiler starting its trace (PyTorch ``torch/profiler/profiler.py(N):
    #: start_trace``) and one of its exit (``... __exit__``): a start inside the exit is a trace begun as the
    #: profiler closed -- a schedule whose recording steps the loop never reached (``job.kind._profiler_only``)
    profiler_start_frame: NamePredicate = never
    profiler_exit_frame: NamePredicate = never
    #: any frame of the profiler's own Python code (torch.profiler's ``step``, ``__exit__``): its own work, no call of
    #: the program's (``metrics.breakdown.frames_in_gaps`` names none)
    profiler_frame: NamePredicate = never
    #: a kernel launch call that, made where the capture records the framework's dispatch (``dispatch_event``) on the
    #: same thread yet outside every op and range, is a Python launcher's of its own kernels (PyTorch: a driver-API
    #: launch -- Triton's JIT runtime called directly, CuPy, Numba): the host time right before it, which nothing
    #: records, is that launcher's (``metrics.syncs.launcher_silence``); never where the framework's own launches
    #: can lie outside its ops (a JAX or TF executor launches through the driver itself)
    launcher_call: NamePredicate = never
    #: the host's time between its launches that no event records is the program's own code, not a framework's
    #: dispatch: a GPU program with no ML framework (CUDA C++, Fortran) calls the runtime itself, so what its launching
    #: thread does outside every call is its own computation, which a graph of its launches leaves as it is.  The step
    #: ledger books that time as the host's unrecorded time (``other``), not as launch wait
    #: (``metrics.breakdown.own_code_spans``).  False for a framework: its host time between launches is its dispatch
    #: or the model's Python, which a graph of the step replays away (PyTorch's eager ops, a jitted call's dispatch)
    own_code_between_launches: bool = False
    #: host events the framework's runtime writes on the program's own thread outside its compiled work (JAX's
    #: ``PjitFunction(f)``, buffer waits, allocations; TF's ``FunctionRun``, ``TFE_*``): in a format where the program's
    #: own annotations are events like the runtime's (XPlane TraceMe), what is left on that thread outside them is the
    #: program's (``frameworks.user_ranges``)
    runtime_event: NamePredicate = never
    #: user-facing words and phrases (keys of :data:`GENERIC_LABELS`), and ``title:<rule>`` finding titles
    labels: Mapping[str, str] = field(default_factory=dict)
    #: headline card id or rule id -> why it has no meaning for this framework (shown instead of a number)
    not_applicable: Mapping[str, str] = field(default_factory=dict)
    #: keys of :attr:`not_applicable` that apply after all where the capture records the program's own input pipeline
    #: (its ranges named for fetching its batch, :attr:`input_range`, hold host time of the steps): a GPU program with
    #: no ML framework has no loader of a framework's to check, but one that marks its own fetch has an input pipeline
    applies_with_own_input: frozenset[str] = frozenset()
    #: rule id (or ``rule:variant``) -> the fixes, most useful first
    fixes: Mapping[str, tuple[Action, ...]] = field(default_factory=dict)
    #: how to capture a profile with step markers (capture-quality advice, empty states)
    capture_snippet: str = ""
    #: how this framework's captures record the allocator's memory events, in words that follow "record them" (a
    #: session whose report holds none: ``serve.mcp_server.memory_text``); "" where it records none this tool reads.
    #: Why here: a TensorFlow session's empty memory view was told PyTorch's ``profile_memory=True`` (review70)
    memory_record: str = ""
    #: the capture formats (``formats.REGISTRY`` ids) whose window :attr:`capture_snippet` and the ``capture_quality``
    #: fixes move themselves -- a serving engine profiled from outside by Nsight (Triton Inference Server): its own
    #: advice, not the format's generic window options, is how to record it (``rules.base.Ctx.steady_fix``)
    capture_formats: frozenset[str] = frozenset()
    #: the same in one or two short lines, with LOGDIR (the CLI's "no profiles found" help)
    capture_hint: tuple[str, ...] = ()
    #: the input format (``formats.REGISTRY`` id) this framework's profiler writes
    writes: str = ""
    #: other formats only this framework writes (PyTorch's memory snapshots), told apart from ``writes`` because they
    #: are not where its profiles go
    also_writes: tuple[str, ...] = ()
    #: an op type whose work Tensor Cores can do (TF ``MatMul``, ATen ``addmm``, HLO ``dot``)
    tc_eligible_op: NamePredicate = never
    #: regex fragments of the element-wise kernels this framework (or its compiler) generates
    elementwise_kernels: tuple[str, ...] = ()
    #: regex fragments of a kernel name holding the framework's word for a weight update (its optimizers' names,
    #: :data:`OPTIMIZER_KERNEL`; PyTorch's ``clip_grad``, ``_foreach_``, Inductor's ``triton_for_fused``): every
    #: registered framework's, joined, are ``frameworks.update_kernel_word``'s one list
    update_kernels: tuple[str, ...] = ()
    #: (name prefix, kernel class) of the kernels its compiler names by their kind (Inductor's ``triton_red_``): the
    #: class a kernel's own name states, for the report's kernel classes
    kernel_kinds: tuple[tuple[str, str], ...] = ()
    #: (regex, kernel class) of the kernels of this framework and of the libraries it calls whose function names what
    #: they do, wherever the name puts it (ATen's ``multi_tensor_apply_kernel<..., FusedAdamMathFunctor<...>>``, TF's
    #: ``ApplyAdamKernel``, PyTorch's nvFuser and FBGEMM kernels): the class of work no vendor's family claims, for
    #: the report's kernel classes; the first that matches wins
    named_kernel_kinds: tuple[tuple[str, str], ...] = ()
    #: host events that are bookkeeping, not host compute (wrappers whose children are classified, markers)
    not_host_work: NamePredicate = never
    #: regex fragments of kernels this framework (or its libraries) launches that are positively no matmul or
    #: convolution, even under a matmul op (ATen's own ``at::native`` kernels: ATen calls cuBLAS/cuDNN for GEMMs)
    not_gemm_kernels: tuple[str, ...] = ()
    #: host events only this framework's own execution of the program's work writes (PyTorch's ATen ops, ``aten::mm``):
    #: a capture of its profiler that holds one ran its work, whatever else ran beside it (``frameworks.detect_work``)
    work_event: NamePredicate = never
    #: kernels only this framework's compiler names so (JAX: XLA's fusions ``loop_transpose_fusion`` and wrapped
    #: instructions ``wrapped_broadcast``): in another framework's capture holding no op of that framework's own
    #: (:attr:`work_event`), the work they are is this framework's (``frameworks.detect_work``)
    work_kernel: NamePredicate = never
    #: a Python frame, as a profiler's tracer records it, of this framework's own package (``.../jax/_src/api.py(2757):
    #: block_until_ready``): the program called it, the same evidence as :attr:`work_kernel`
    work_frame: NamePredicate = never
    #: compiling the step (the eager-execution fix) also fuses its element-wise ops (``jax.jit``: XLA); False where
    #: the compiled graph runs the same kernels (``tf.function`` without ``jit_compile``)
    compiled_step_fuses: bool = False
    #: fixes a trace can show are already in use: evidence id -> (what shows it, in words; host event name
    #: predicate; kernel name predicate[; the words where only host events show it]).  ``metrics`` looks for each
    #: among the trace's distinct names, and says what it found: a kernel's words only where a kernel shows it.
    applied_markers: Mapping[str, tuple] = field(default_factory=dict)
    #: a fix's text -> the evidence id that shows it applied: such a fix is never recommended to a run that uses it
    fix_applied: Mapping[str, str] = field(default_factory=dict)
    #: a fix's text -> the evidence ids of the fixes it comes after: given only where the trace shows one of them in
    #: use (the next lever once the first is applied, not a third fix beside the first two)
    fix_follows: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: evidence id -> a fix less that lever, for fixes that bundle it with others (None: the fix does not hold it):
    #: where the trace shows the lever in use the fix keeps the rest, the lever's words left out and its code marked
    #: kept (PyTorch's DataLoader fix "into pinned memory, ``pin_memory=True``" beside uploads pinned and asynchronous
    #: already -- its worker processes are still news; :attr:`fix_applied` drops a fix that is the lever alone)
    fix_rest: Mapping[str, Callable[[Action], Action | None]] = field(default_factory=dict)
    #: a fix's text -> what it acts on and the host events that show it (an optimizer step for the fused optimizer):
    #: a fix whose object the trace does not hold is not given
    fix_needs: Mapping[str, tuple[str, NamePredicate]] = field(default_factory=dict)
    #: what a fix's code puts in place (evidence ids of ``applied_markers``), for fixes not in ``fix_applied`` (the
    #: variants written for a job): a fix that compiles the model is no news to a compiled run
    fix_introduces: Callable[[Action], tuple[str, ...]] = lambda _a: ()
    #: what a fix's code names that a GPU vendor's device lacks, or gained only from one version of the framework:
    #: vendor (``devices.*.VENDOR``) -> (a marker in the fix's code, the first version that has it there -- None: no
    #: release --, the fix given instead where it lacks it: an action, :data:`WITHOUT_LINE`, :class:`Spelled`,
    #: :class:`Noted` or None: none), asked in order (:meth:`fit`)
    device_features: Mapping[str, tuple[tuple[str, tuple[int, ...] | None, Action | Spelled | Noted | str | None], ...]] = \
        field(default_factory=dict)
    #: the same for what the framework's build on an operating system lacks (``MemorySnapshot.platform``:
    #: "Windows"), asked before the vendor's (:meth:`fit`)
    platform_features: Mapping[str, tuple[tuple[str, tuple[int, ...] | None, Action | Spelled | Noted | str | None], ...]] = \
        field(default_factory=dict)
    #: host events only a training step makes: the backward pass, the optimizer's update (the job stage's evidence)
    training_event: NamePredicate = never
    #: a host event made only while autograd records the forward for a backward (PyTorch: AOTAutograd's
    #: ``CompiledFunction``, the compiled forward's ``autograd.Function``, called only where grad mode is on and an input
    #: or parameter requires grad -- under ``no_grad`` / ``inference_mode`` the compiled inference graph runs without
    #: it): with no training event in the window, forward passes that kept tensors for a backward that never ran
    #: (``job.Job.autograd_forwards``)
    autograd_forward_event: NamePredicate = never
    #: an op the framework records in a process whose autograd records a backward pass's own nodes beside it
    #: (PyTorch's ATen ops, ``aten::*``, beside autograd's ``*Backward`` nodes -- the ``backward_nodes`` label): such
    #: ops run where no training event did are forward passes (``job.kind``)
    autograd_op: NamePredicate = never
    #: an op that runs compiled code whose own ops the trace does not record (TensorFlow's XLA ``_XlaRun``,
    #: ``XlaLaunch``): beside one, ops recorded with no backward show no forward pass -- the compiled code may hold it
    unrecorded_ops_event: NamePredicate = never
    #: the engine's own range around each op it runs for the program -> the name of the op it wraps ("" for any other
    #: event): autograd's ``autograd::engine::evaluate_function: IndexBackward0`` around the node ``IndexBackward0``.
    #: The wrapper names no code of the program's -- every backward node wears it alike -- so a wait inside is named
    #: by the op within (``metrics.syncs._outer_op``)
    engine_wrapper: Callable[[str], str] = lambda _n: ""
    #: an op whose blocking copy to the device is its index's own upload (PyTorch's ``x[idx]`` / ``x[idx] = v`` with
    #: ``idx`` on the CPU: ``aten::index`` copies the index to the GPU, waiting for the stream): its fix keeps the
    #: index on the device (``excessive_memcpy:index_upload``), not a batch's pinning
    index_upload_op: NamePredicate = never
    #: the framework's calls recorded as op ranges (``HostRanges.op``: PyProf's and DLProf's NVTX around every
    #: ``torch``, ``Tensor`` and ``torch.nn.functional`` call) show a training step's backward among them
    #: (``Tensor.backward``), and its backward launches its kernels from a thread of its own: such ranges with no
    #: backward, every launch on a thread that recorded them, are a forward pass (``job.kind``)
    op_ranges_show_backward: bool = False
    #: a stack frame (``file.py:123 function``) whose code allocates only a training job's memory -> what it holds, in
    #: words ("an optimizer's state"); "" for any other frame (``job.kind`` reads a snapshot's live blocks with it)
    training_frame: Callable[[str], str] = lambda _f: ""
    #: a stack frame (``file.py:123 function``) in a KV cache's code: a generation's cache, made in the forward, that
    #: says inference beside an optimizer's state (``job.kind`` reads a snapshot's live blocks with it)
    kv_cache_frame: NamePredicate = never
    #: a data-parallel wrapper's hooks around a forward pass (FSDP's ``pre_forward``), which also shards a model run
    #: forward only: training's only where that forward records autograd's graph (the reader's ``grad_recorded_ops``)
    sharded_forward_event: NamePredicate = never
    #: an op of tensor parallelism (PyTorch DTensor's ``Redistribute``): the job's collectives move activations between
    #: the shards of each layer, not parameters or gradients (``job`` tags it ``tensor_parallel``)
    tensor_parallel_event: NamePredicate = never
    #: of those, the calls that ready a training step without doing its work (PyTorch's ``Optimizer.zero_grad``): a
    #: benchmark that zeroes the gradients, then runs its forward under ``no_grad``, trains nothing
    grad_reset_event: NamePredicate = never
    #: host events the framework writes only for work on a GPU (PyTorch's NCCL process group's ``nccl:all_to_all``,
    #: ``aten::record_stream`` on a GPU stream, cuDNN's ops): a capture holding them but no GPU record lost its GPU side
    gpu_only_event: NamePredicate = never
    #: the accelerator backend a host op is dispatched only for, by PyTorch's device string (its MPS ops
    #: ``aten::_mps_convolution``, ``aten::_lstm_mps``: "mps"); "" for an op of no one backend.  A backend whose GPU
    #: work the profiler does not trace (``devices.apple``) shows itself by these alone (``job.kind``)
    backend_event: Callable[[str], str] = lambda _n: ""
    #: host ops that only allocate a tensor's memory (PyTorch's ``aten::empty``, ``aten::empty_strided``): on the host
    #: they map pages lazily (microseconds to a few ms); one lasting tens of ms is a device allocation creating the
    #: CUDA context -- GPU use a capture shows even where its CUDA activity was not recorded (``job.kind``)
    allocation_event: NamePredicate = never
    #: the host op that reads one element of a tensor into host memory (PyTorch's ``aten::_local_scalar_dense``, under
    #: ``.item()``): on a CPU tensor a memory read, microseconds; one lasting milliseconds waited for a device's queue
    #: -- GPU use a capture shows even where its CUDA activity was not recorded (``job.kind``)
    scalar_read_event: NamePredicate = never
    #: the host event of the program reading device values into host memory, blocked until they are there, in a
    #: format whose runtime records no sync call of its own (JAX's ``np.asarray(jax.Array)``: the annotation every
    #: read of a ``jax.Array``'s value passes through -- ``float(x)``, ``x.item()``, ``np.asarray(x)``,
    #: ``jax.device_get``, ``print(x)``): a sync the program asked for (``metrics.syncs``)
    blocking_read_event: NamePredicate = never
    #: host events inside which a ``blocking_read_event`` is the runtime's own copy, not the program's read: where the
    #: event is a copy call the runtime also makes inside its ops (TensorFlow's ``MemcpyD2H``: an eager ``.numpy()``
    #: on the Python thread in no op; a graph's copies inside its executor's ops and function runs); JAX's read
    #: annotation is the read wherever it sits
    blocking_read_holder: NamePredicate = never
    #: the host event of a blocking read copying the read bytes out of the runtime's pinned staging buffer into the
    #: program's own memory (JAX's ``D2H Copy From Staging Buffer``, on its own thread, inside the read's wait): time
    #: the read spends moving bytes, as its transfer does -- the copy's cost, not the wait for the GPU's queue
    read_staging_event: NamePredicate = never
    #: the host event of the runtime copying a program's array into its own pinned staging buffer before the device
    #: copy reads it (JAX's ``H2D Dispatch``: PjRt linearizes the array into the staging buffer -- ``Transpose::
    #: Execute`` where the layouts differ -- then the DMA copies from that buffer; it stages only a source that is not
    #: DMA-mapped): where it ran, the device copy's pinned host side is the runtime's buffer, the program's array is
    #: pageable (``job.kind``'s copy words: h37-probe44v)
    upload_staging_event: NamePredicate = never
    #: the program emptying the framework's device memory cache itself (PyTorch's ``torch.cuda.empty_cache()``, as its
    #: Python frame or a range named for it): the driver frees inside one are the program's own release, and the next
    #: pass asks the driver for that memory again -- churn a call causes, not a cache that is off (``allocator_churn``)
    cache_release_event: NamePredicate = never
    #: a distributed backend that runs only on GPUs (PyTorch's NCCL process group; gloo runs on the CPU too)
    gpu_only_backend: NamePredicate = never
    #: the process-group backend a host event of a collective names by its own name (PyTorch's c10d annotation
    #: ``gloo:gather`` -> "gloo"), "" for any other event: what library ran a collective the host recorded, where no
    #: GPU record says (``devices.collectives.cpu_backend``: a window of a CPU backend's collectives alone, ``job.kind``)
    collective_backend: Callable[[str], str] = lambda _n: ""
    #: host events of a data-parallel wrapper loading a layer's parameters onto the GPU before it runs (FSDP's
    #: pre-forward / pre-backward hooks): a host-to-device copy launched inside one uploads an offloaded parameter
    param_upload_event: NamePredicate = never
    #: host events only inference runs (TF's ``predict_function``, a SavedModel's ``serving_default``)
    inference_event: NamePredicate = never
    #: a training wrapper's own range around a phase of its loop that only training runs (Lightning's
    #: ``[pl][profile]run_training_batch``, ``...Strategy.training_step`` / ``.backward``): recorded with the host's
    #: ops whether or not the GPU's side was, so it names the job where autograd's nodes are not in the window
    training_phase: NamePredicate = never
    #: such a wrapper's range around an evaluation or prediction phase (``...validation_step``, ``predict_step``):
    #: forward passes
    evaluation_phase: NamePredicate = never
    #: the host event that ends each training step (PyTorch's optimizer step): steps where nothing marks them
    step_end_event: NamePredicate = never
    #: host events of compiling the program: a one-time cost, never the steady state's (the job stage's phase)
    compile_event: NamePredicate = never
    #: host events whose own time -- outside every op and call nested in them -- is the framework compiling what
    #: they are about to run (TorchScript's fallback functions: the executor profiles and optimises a graph for
    #: shapes its guards have not seen before the graph runs); the nested work itself is the program's
    compile_gap_event: NamePredicate = never
    #: a framework op whose own syncs are a library's algorithm search (PyTorch's convolutions under
    #: ``cudnn.benchmark``: candidate kernels timed with events on the first call of each shape): a one-time cost
    autotune_event: NamePredicate = never
    #: kernels that only convert a tensor's dtype (regex fragments), and op types that do (``_to_copy``, TF ``Cast``)
    cast_kernels: tuple[str, ...] = ()
    cast_ops: tuple[str, ...] = ()
    #: the capture advice and the fixes whose code runs the job's own loop, composed for a job's tags (PyTorch: the
    #: loop of a training step, a forward pass or work of no known kind (``any_work``); "one trace per rank" unless
    #: the job is one process (``alone``); a serving engine's profiler routes; a cold start's schedule that skips
    #: start-up around the job's own loop): tags -> (advice, fixes), in place of ``capture_snippet`` and those keys
    #: of ``fixes`` before the tags' own fixes are chosen.  The advice is the whole answer for the tags: no tag
    #: replaces it afterwards with a text written for another loop (h37-left43: a cold job's advice looped
    #: ``run_one_step()`` beside fixes looping ``model(batch)``).  None: one text serves every job
    looped: "Callable[[tuple[str, ...]], tuple[str, Mapping[str, tuple[Action, ...]]]] | None" = None
    #: a call of the user's model (PyTorch: an ``nn.Module`` call, from ``with_stack`` or ``with_modules``): a step
    #: holds whole model calls, so a span repeated inside one model call is the model's own structure (its layers)
    model_call: NamePredicate = never
    #: the module a model-call span names (PyTorch ``with_modules``' ``nn.Module: <Class>_<n>``: ``<Class>_<n>``, one
    #: name per module object, the same on each of its calls), "" for any other span: the program a call runs, as an
    #: XLA execution names its module -- instances of a span that run different modules are no loop's iterations
    named_module: Callable[[str], str] = lambda _n: ""
    #: the class of the module a model-call span names (PyTorch ``with_modules``' ``nn.Module: T5Attention_3``:
    #: ``T5Attention``, one name for every instance), "" for any other span: the model's own code, which the metrics
    #: name beside a finding whose fix is the model's (``metrics.attention``)
    module_class: Callable[[str], str] = lambda _n: ""
    #: the line of the framework's own frame that moves a module's tensors onto the device (PyTorch's
    #: ``Module._apply`` in a ``file.py:123 function`` frame), None for any other frame: a memory snapshot's stacks
    #: that differ only in it tell parameters from their gradients (``metrics.memory``)
    module_apply_line: Callable[[str], "int | None"] = lambda _f: None
    #: how to record the allocator history a memory snapshot of the given layout (the reader's ``layout`` fact) lacks,
    #: in words that fit that release; "" where the framework writes no snapshot
    record_history: Callable[[str], str] = lambda _layout: ""
    #: the framework version a trace's ``producer`` facts imply, as (oldest, newest-exclusive) version tuples; None
    #: where they say nothing (``frameworks.<name>.version_range``)
    version_range: Callable[[Mapping[str, str]], "tuple[tuple[int, ...], tuple[int, ...] | None] | None"] = \
        lambda _facts: None
    #: the job tags a version range earns (``frameworks.<name>.version_tags``): the framework's own cuts between
    #: releases that spell a fix differently (PyTorch: ``legacy`` before 2.0, ``cuda_amp`` where the trace may
    #: predate ``torch.autocast``); none where the trace does not date the framework
    version_tags: Callable[["tuple[tuple[int, ...], tuple[int, ...] | None] | None"], "tuple[str, ...]"] = \
        lambda _rng: ()

    def applied(self, a: Action, evidence: Mapping[str, str]) -> str | None:
        """What in the trace shows fix ``a`` is already in use (``evidence``: id -> words), None when nothing does."""
        key = self.fix_applied.get(a.text)
        if key:
            return evidence.get(key)
        return next((evidence[k] for k in self.fix_introduces(a) if k in evidence), None)

    def rest(self, a: Action, evidence: Mapping[str, str]) -> tuple[Action, list[str]]:
        """Fix ``a`` less the levers it bundles that the trace shows in use (:attr:`fix_rest`), and what shows each
        lever left out (``evidence``: id -> words)."""
        shown = []
        for key, without in self.fix_rest.items():
            b = without(a) if key in evidence else None
            if b is not None and b != a:
                a = b
                shown.append(evidence[key])
        return a, shown

    def premature(self, a: Action, evidence: Mapping[str, str]) -> bool:
        """Whether fix ``a`` is a next lever (:attr:`fix_follows`) whose first the trace does not show in use."""
        after = self.fix_follows.get(a.text)
        return bool(after) and not any(k in evidence for k in after)

    def label(self, key: str, **fmt: object) -> str:
        """A word or phrase in this framework's vocabulary (``{name}`` fields filled from ``fmt``)."""
        text = self.labels[key] if key in self.labels else GENERIC_LABELS[key]
        return text.format(**fmt) if fmt else text

    def title(self, rule_id: str) -> str | None:
        """This framework's title for a rule's findings, or None for the rule's own (framework-neutral) title."""
        return self.labels.get(f"title:{rule_id}")

    def for_job(self, tags: Iterable[str]) -> "Framework":
        """This framework as it talks to one job: the fixes and capture advice written for its ``tags`` (the kind
        of work, ``serving`` / ``inference``; a cold start, ``cold``; an old version, ``legacy``) replace the general
        ones.

        A fixes key ``rule@tag`` stands for every fix of ``rule`` to a job with that tag: the general fixes of the
        rule and of all its variants are dropped, so no training-loop fix survives beside the serving one (the tag's
        own ``rule:variant@tag`` keys beside it are kept).  A ``rule:variant@tag`` key alone replaces that variant
        only: a cold start's "skip the first calls" answers the warm-up, not every capture finding (h37-review2:
        ``cold_a100_alexnet`` printed it under three findings, one of them "The capture is long").  Tags are applied
        in order; a later one wins.  Before them, ``looped`` composes the advice and the fixes that run the job's
        own loop for all the tags (a ``rule@tag`` key among them is the tag's, as any other); the capture advice is
        ``looped``'s alone, never one tag's fixed text."""
        tags = tuple(tags)
        fixes = dict(self.fixes)
        snippet = self.capture_snippet
        if self.looped is not None:  # composed for this job, never reworded after the fact (h37-left29)
            snippet, looped = self.looped(tags)
            fixes.update(looped)
        composed = dict(fixes)
        for tag in tags:
            mine = {k[: -len(tag) - 1]: v for k, v in composed.items() if k.endswith("@" + tag)}
            if not mine:
                continue
            rules = {k for k in mine if ":" not in k}  # whole rules the tag rewrites; a variant alone stays one
            fixes = {k: v for k, v in fixes.items() if fix_rule(k) not in rules}
            fixes.update(mine)
        fixes = {k: v for k, v in fixes.items() if "@" not in k}
        fixes.update(allocator_fixes(self.fixes))
        # as composed for this job's loop (TensorFlow's sync-once fix names its step), whatever a tag rewrote
        fixes.update(job_free_fixes(composed))
        return replace(self, fixes=fixes, capture_snippet=snippet)

    def fix(self, key: str, **fmt: object) -> list[Action]:
        """The fixes for ``rule`` or ``rule:variant`` (the variant's, else the rule's), as a new list.  A variant
        ``type/kind`` (``comm_exposed:AllToAll/experts``: what the exchange is for) falls back to ``type``'s, then
        to the rule's: a framework that writes no fix for the kind keeps its fix for the type.

        ``fmt`` fills ``{name}`` fields of the fixes' text (never of their code).
        """
        while key not in self.fixes and "/" in key.split(":", 1)[-1]:
            key = key.rsplit("/", 1)[0]
        if key in self.fixes:
            found = self.fixes[key]
        else:
            found = self.fixes.get(key.split(":", 1)[0], ())
        return [_filled(a, fmt) for a in found]

    def fit(self, a: Action, vendor: str, version: tuple[int, ...] | None, platform: str | None = None) -> Action | None:
        """``a`` as the job's GPU can follow it: a fix whose code names a feature the vendor's device lacks at the
        framework's ``version`` (its lowest; None where the trace does not date it, so a feature that came late is
        not assumed) -- or the framework's build on the job's ``platform`` lacks (None: not known, nothing assumed)
        -- is replaced by the general fix without it, or left out where there is none (:attr:`device_features`,
        :attr:`platform_features`, the platform's first: a vendor's note would end the reading)."""
        features = (*self.platform_features.get(platform or "", ()), *self.device_features.get(vendor, ()))
        for marker, since, instead in features:
            if marker in (a.snippet or "") and (since is None or version is None or tuple(version) < since):
                if instead == WITHOUT_LINE:  # the fix's other lines stand alone; a fix that is only the call goes
                    rest = "\n".join(line for line in (a.snippet or "").split("\n") if marker not in line)
                    return self.fit(replace(a, snippet=rest), vendor, version, platform) if rest.strip() else None
                if isinstance(instead, Noted):
                    lines = (a.snippet or "").split("\n")
                    at = next(i for i, line in enumerate(lines) if marker in line)
                    indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
                    comment = f"{indent}# {instead.note}"
                    if comment not in lines:
                        lines.insert(at, comment)
                    return replace(a, snippet="\n".join(lines))
                if isinstance(instead, Spelled):
                    lines = [(x[: len(x) - len(x.lstrip())] + instead.line) if marker in x else x
                             for x in (a.snippet or "").split("\n")]
                    return self.fit(replace(a, snippet="\n".join(lines)), vendor, version, platform)
                return self.fit(instead, vendor, version, platform) if isinstance(instead, Action) else None
        return a

    def extra(self, key: str, **fmt: object) -> list[Action]:
        """The fixes of exactly ``rule:variant``: an optional addition that frameworks without it leave out."""
        return [_filled(a, fmt) for a in self.fixes.get(key, ())]

    def fixes_for(self, rule_id: str, variants: Iterable[str], **fmt: object) -> list[Action]:
        """The fixes of several variants of one rule, in order, each once (a missing variant: the rule's)."""
        out: list[Action] = []
        for v in variants:
            out.extend(a for a in self.fix(f"{rule_id}:{v}", **fmt) if a not in out)
        return out

    @property
    def step_calls(self) -> NamePredicate:
        """The host events counted as a step's dispatch calls: the framework's dispatch of compiled work where it
        records one, else its runtime calls (``step_call_event``): ``metrics.Dispatch`` asks, never lists names."""
        return self.dispatch_event if self.has_dispatch else self.step_call_event

    @property
    def has_dispatch(self) -> bool:
        """The capture names the framework's dispatch of compiled work: launch wait is then the host inside it."""
        return self.dispatch_event is not never

    def applies(self, key: str, own_input: bool = False) -> bool:
        """Whether check or card ``key`` has a meaning for this framework's captures; ``own_input``: the capture records
        the program's own input pipeline (``HostInput.source`` "pipeline"), which gives the input checks one
        (:attr:`applies_with_own_input`)."""
        return key not in self.not_applicable or (own_input and key in self.applies_with_own_input)


#: A memory snapshot's capture fixes: how the allocator's history is recorded, whatever the job.  A job kind's or a
#: serving engine's capture advice (its profiler window) replaces every other fix of ``capture_quality``, never these
#: (a vLLM worker's state dump without history read "profile the running server through its profiler routes").
ALLOCATOR_CAPTURE_FIXES = ("capture_quality:no_history", "capture_quality:no_history_2.0",
                           "capture_quality:no_history_1.13", "capture_quality:history_cut",
                           "capture_quality:no_stacks", "capture_quality:no_stacks_2.0",
                           # a snapshot's capacity beside the dump: an inference job's capture advice dropped it from
                           # the notes of unknown capacity (session 71 snap71)
                           "capture_quality:capacity_unknown")


def allocator_fixes(fixes: "dict[str, tuple]") -> "dict[str, tuple]":
    """The :data:`ALLOCATOR_CAPTURE_FIXES` among ``fixes``."""
    return {k: fixes[k] for k in ALLOCATOR_CAPTURE_FIXES if k in fixes}


#: The variants of a rule whose fixes say how to record the capture, not how to change the program: the host's time no
#: event records (``step_gaps:unrecorded``: the profiler's Python tracing, its named ranges), the GPU's capacity beside
#: a memory snapshot.  With every ``capture_quality`` fix they are the capture's words (:func:`capture_fix`).
CAPTURE_VARIANTS = ("unrecorded", "unrecorded_traced", "capacity_unknown")


def capture_fix(key: str) -> bool:
    """A fixes key (``rule``, ``rule:variant``, ``rule@tag``) whose fix says how to record the capture -- its profiler's
    API, windows, tracing options (``capture_quality``, :data:`CAPTURE_VARIANTS`) -- not how to change the work: where
    another framework's profiler wrote the capture (a JAX program under ``torch.profiler``), those are its words."""
    rule = fix_rule(key)
    variant = key.split("@", 1)[0].partition(":")[2]
    return rule == "capture_quality" or variant in CAPTURE_VARIANTS


#: Labels (:data:`GENERIC_LABELS` keys) that name the work and its levers, not the capture's events: where another
#: framework's profiler wrote the capture, these are the framework's that ran the work (a JAX program's "jitted call",
#: "one jitted function", XLA as its compiler), every other label -- ops, syncs, tracing, what the events are -- the
#: capture's.  A key the work's framework has no label for is the generic one, never the writer's.
WORK_LABELS = ("compiled_step", "compiler", "dispatch_call", "gpu_user", "memcpy:levers", "cast_cause",
               "step_gaps:host_work", "step_gaps:launch", "title:xla_not_used")


#: Fixes of the program's own launches whatever its job: a tag's rewrite of their rule (``step_gaps@inference``: the
#: loop between forward passes) keeps them -- a Python launcher before each kernel (Triton called directly) costs the
#: same in a training step, a forward pass or a benchmark, and the gap's other fixes do not name it.  So does a poll
#: of an event until the GPU is done (``host_sync:poll``): one wait, or work meanwhile, whatever the job; and a sync in
#: every turn of a loop too small for its host cost (``launch_bound:step_sync``): once after the loop, whatever the
#: loop runs -- ``launch_bound@inference`` rewrote the step's fixes and dropped it (h37-turn66).
JOB_FREE_FIXES = ("step_gaps:launcher", "host_sync:poll", "launch_bound:step_sync")


def job_free_fixes(fixes: "dict[str, tuple]") -> "dict[str, tuple]":
    """The :data:`JOB_FREE_FIXES` among ``fixes``."""
    return {k: fixes[k] for k in JOB_FREE_FIXES if k in fixes}


def fix_rule(key: str) -> str:
    """The rule id of a fixes key: ``rule``, ``rule:variant``, ``rule@tag`` or ``rule:variant@tag``."""
    return key.split("@", 1)[0].split(":", 1)[0]


def refilled(text: str, template: str, other: str) -> str | None:
    """``other`` filled with the fields ``text`` filled ``template`` with (its ``{copies}``: the rule's words), None
    where ``text`` is not ``template`` filled.  Why: a fix whose lever is in use is told as its other template, composed
    with what the rule said -- never the finished words reworded (h37-nonblock34: PIN_MEMORY's "and copy them with
    non_blocking=True" left out where the copies ask for it already)."""
    pattern, seen = "", set()
    for literal, name, _spec, _conv in Formatter().parse(template):
        pattern += re.escape(literal)
        if name is not None:
            pattern += f"(?P={name})" if name in seen else f"(?P<{name}>.*?)"
            seen.add(name)
    m = re.fullmatch(pattern, text, re.DOTALL)
    return other.format(**m.groupdict()) if m else None


def _filled(a: Action, fmt: Mapping[str, object]) -> Action:
    return Action(text=a.text.format(**fmt), snippet=a.snippet, snippet_lang=a.snippet_lang) if fmt else a


#: Words and phrases every framework may override; the value here is the framework-neutral wording.
GENERIC_LABELS: dict[str, str] = {
    # ``capture_quality:collectives_only`` on a CPU backend (``Kind.collectives_backend``): how a GPU job came to run
    # its collectives there, in the framework's words for setting up its communication (PyTorch: a process group)
    "collectives_on_cpu": ("its collectives were set up on {backend} where a GPU's own collective library moves GPU "
                           "tensors between GPUs"),
    # ``memory_imbalance``: who holds the bytes, why a reserve grows apart, and which GPU of a replicated module is fullest
    "memory_imbalance:gpus": "the GPUs of one process",
    "memory_imbalance:replicas": "one module's replicas on the GPUs of one process",
    "memory_imbalance:split_blocks": ("the allocator keeps split blocks on GPU {gpu} that later requests do not fit, so "
                                      "it runs out of memory first while the others keep room (its cache of wholly free "
                                      "segments is not counted: the allocator hands that back before it fails)"),
    "memory_imbalance:first_gpu": ("The fullest is the first GPU: the replicas' output device, which holds the module's "
                                   "master copy and gathers every replica's outputs."),
    "memory_imbalance:other_gpu": ("The fullest is not the first GPU (the output device, which holds the master copy and "
                                   "the gathered outputs): its replica made more than the others, most likely because "
                                   "its share of the batch holds more bytes."),
    "copies:staging": "pageable copies pass through the driver's staging buffer, pinned ones do not",
    "copies:staged": "host side the runtime's pinned staging buffer; the program's memory pageable, staged through "
                     "it by the host: {staged}",
    # what the loop's own code in its fetch range is, as the capture shows it (``input_bound:own_range``'s ``{calls}``):
    # the calls the profiler recorded there, or none
    "input_bound:own_range_calls": " -- the profiler recorded {calls} there, the rest is code it did not record",
    "input_bound:own_range_unrecorded": " -- code the profiler did not record",
    # the unrecorded time right before kernels launched outside every op (``Framework.launcher_call``)
    "unrecorded:launcher": "{ms} of it comes right before kernels launched outside every op of the framework ({launches})",
    # the profiler's tracing of every Python call, and how to measure the host's time without it (``traced_python``)
    "python_tracing": "every Python call (the profiler's Python tracing)",
    "python_tracing_confirm": "profile again without Python tracing to measure the host's time as the job runs it",
    # how a memory snapshot without history came to have none, by its layout (``capture_quality``'s note)
    **{f"snapshot_made:{layout}": "its allocator recorded none" for layout in ("1.13", "2.0", "2.0 or older", "2.1", "")},
    # a memory history that frees blocks it never allocated (``metrics.memory``'s note; fields: blocks, size, entries)
    "snapshot_begun:ring": "the history frees {blocks} it never allocated ({size}) and holds exactly {entries}: "
                           "most likely the allocator kept only its last {entries} events -- what came before its "
                           "first event, and any peak there, is not in it",
    "snapshot_begun:either": "the history frees {blocks} it never allocated ({size}): it begins after {made} "
                             "-- what came before its first event, and any peak there, is not in it",
    "snapshot_begun:state": "the history holds one event, a free of {blocks} it never allocated ({size}): the "
                            "allocator kept its last event alone -- what came before it, and any peak there, is not "
                            "in it",
    # an XLA program's ``conditional`` instructions in the framework's words (``metrics.flops``' note on FLOPs counted as
    # if every branch ran): the HLO's own name where the framework's call that makes them is not known
    "flops:conditional": "conditional branches",
    # how a snapshot's history that carries no stack was recorded (``capture_quality``'s note): without any, or -- the
    # blocks live at the dump carrying theirs (``Memory.dump_stacks``) -- with the live blocks' stacks alone (":2.0":
    # in a 2.0 layout, whose setting for it is its own)
    "snapshot_stacks:none": "it was recorded without context",
    "snapshot_stacks:dump": "it was recorded with the stacks of the blocks live at the dump alone (the job line reads "
                            "them) and none of the history's events",
    "snapshot_stacks:dump:2.0": "it was recorded with the stacks of the blocks live at the dump alone (the job line "
                                "reads them) and none of the history's events",
    # a leak whose blocks no frame names (``memory_leak``): the history holds no stack for them
    "leak_site:unnamed": "at a line the history cannot name: it holds no stack for them -- record the allocator's "
                         "history with stacks to name it",
    "op": "op",
    "ops": "ops",
    #: the events that show a backward pass ran, in the framework's words (``job.kind``: ops but no backward)
    "backward_nodes": "the backward pass's own ops",
    "ops_short": "framework ops",
    "ops_table": "Top ops ({kept}, all GPUs)",
    "input_wait_meaning": "share of the {step} the GPU was idle while the host prepared or waited for input",
    #: the framework's own input pipeline event, as ``input_bound`` names the part of the wait it holds
    #: (``HostInput.own_ms_per_step``)
    "input_next": "its iterator's next batch",
    #: the same, where the profiler's Python tracer recorded it as the iterator's own frame (``{frame}``:
    #: ``Framework.frame_label`` of ``HostInput.own_frame``)
    "input_next_frame": "its iterator's `{frame}`, as the Python tracer recorded it",
    "input_function_ops": "the ops of the input pipeline's own functions, run on the step's threads",
    "host_op_meaning": "framework ops that launched no GPU work, by count (by time in detail); should be very small",
    #: one call of the framework's dispatch of compiled work (step-level launch-bound)
    "dispatch_call": "compiled call",
    #: syncs inside the framework's ops that search for the fastest library kernel (the job stage's one-time costs)
    "autotune": "an algorithm search (the library times candidate kernels on the first call of each shape)",
    "compile_gap": "the framework compiling a graph for input shapes it had not seen",
    #: why the compile gaps recur (the cold-start finding, where they are most of the one-time costs): the planning
    #: is per input shape, not per process
    "compile_gap_cause": ("The framework compiles its graph again for each input shape it has not seen: inputs whose "
                          "sizes change from call to call pay it again for each new shape, in the steady run too."),
    #: what proves a forward ran with autograd on (``Framework.autograd_forward_event``; ``rules.forward_with_autograd``)
    "autograd_forward": "calls of a forward that records for a backward",
    #: why a graph is captured again in the steady run (``rules.graph_recaptured``)
    "recapture_cause": ("the program records its graph again rather than replay the one it has: a new input shape, or "
                        "a runtime that starts a new recording on each call"),
    #: what the cold-start saving assumes where the compile gaps are most of the one-time costs
    "compile_gap_saving": "the steady state's inputs reuse graphs already compiled, and pay none of the compilation",
    #: who should see the GPU ("Was the GPU visible to ...?")
    "gpu_user": "the framework",
    #: what a process copies to a GPU before its first kernel (the job stage's one-time costs)
    "first_upload": "the model's parameters and first inputs uploaded once",
    #: the step compiled as one unit (eager-execution saving)
    "compiled_step": "one compiled graph",
    #: what makes blocking copies overlap or go (excessive_memcpy's saving), in the framework's own calls
    "memcpy:levers": "pinned host memory and asynchronous copies, data kept on the GPU, transfers started ahead of use",
    #: the compiler that fuses kernels (xla_not_used)
    "compiler": "XLA",
    #: host work that holds the GPU idle between steps
    "step_gaps:host_work": "host work between steps",
    #: the same, where what fills the gaps is the host's own ops (no sync among them): tensor work on the CPU
    "step_gaps:cpu_ops": "the host's own ops between steps (work on the CPU, no wait for the GPU)",
    #: the same, where what fills the gaps is the program's own Python calls the profiler recorded (no op among them)
    "step_gaps:py_calls": "the host's own Python calls between steps (no op, no wait for the GPU)",
    #: the same, where what fills the gaps is the host dispatching the next step's own compute (a range of the program
    #: that launches the step's kernels) before its first launch
    "step_gaps:dispatch": "the host dispatching the next step's own ops before their first launch",
    #: ``host_sync``'s opening: the syncs the program asked for, where they are and how long the host waited in them
    #: (``{step}``: the window's noun, ``Ctx.step_noun``, for a framework whose words name where the syncs sit)
    "host_sync:waits": "The host waits for the GPU {calls} (in {who}; {wait} in the waits)",
    #: appended to ``host_sync:waits`` where ops made the syncs to go on with their own work (h37-probe43s): the op
    #: read a size back (``{calls}`` of the waits per step), the program asked for no value
    "host_sync:in_op": "; {calls} of them inside ops that read a size back from the GPU to go on with their own work, "
                       "where the program asked for no value",
    #: appended to ``host_sync:waits`` where the waits are polls (``HostSyncs.poll_calls_per_step``, h37-probe44p)
    "host_sync:poll": "; {calls} of them by polling, the program asking whether an event or a stream was done until it was "
                      "(each run of queries one wait)",
    #: what its metric measures, where the threshold's own words (the CUDA runtime's syncs) do not fit; "": those
    "host_sync:meaning": "",
    #: why its title's wait matters, in the framework's words for the waits ("syncs"; JAX's waits and reads)
    "host_sync:drains": "syncs drain the GPU",
    #: the host launching work during a gap (TF: launch threads contending with tf.data threads)
    "step_gaps:launch": "host launch threads busy (thread contention)",
    "param_upload": "a data-parallel wrapper's parameter-loading hooks (parameters offloaded to host memory)",
    #: appended to the launch-skew summary when the capture shows no per-GPU launch threads
    "launch_skew:no_private_threads": "",
    #: where casts that no GEMM or precision number shows come from, in the framework's words (dtype_casts)
    "cast_cause": "fp32 weights cast to the 16-bit dtype again on every call, or layers kept in fp32",
    #: the streams a program makes and waits between itself, as the handoff finding's look-here advice names them
    #: (``capture_quality``'s handoffs between streams): the framework's own API where it has one
    "handoff:own_streams": "the program's (streams it creates and the waits it makes between them)",
}


def op_type(tf_op: str) -> str:
    """Type of an op event name: TF ``scope/name:Type``, ATen ``aten::mm`` (the part after the last colon), or the
    last path part of a name without one."""
    if not tf_op:
        return ""
    t = tf_op.rsplit(":", 1)[-1] if ":" in tf_op else tf_op.rsplit("/", 1)[-1]
    return t.split("#", 1)[0].strip()


def op_name(tf_op: str) -> str:
    """The op event name without its type (TF ``scope/name:Type`` -> ``scope/name``)."""
    return tf_op.rsplit(":", 1)[0] if ":" in tf_op else tf_op
