"""Framework vocabulary: which framework wrote a capture, and everything that depends on it.

The analysis is framework-neutral (host events, device events, launches,
steps); what an event *means* and how a fix is *spelled* is not.  Each
supported framework is one module here (``tensorflow``, ``jax``) exporting a
:class:`Framework`: detection markers, host-event predicates (input wait,
dispatch, transfers, background threads, framework ops), labels for the
report, headline numbers that have no meaning for it, and the fixes keyed by
rule id.  Rules, metrics and the report ask :func:`get`; none of them holds a
framework string.  Adding a framework is one new module plus one line in
:data:`REGISTRY`.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import TYPE_CHECKING, Iterable, Mapping

import numpy as np

from tb_gpu_advisor import devices
from tb_gpu_advisor.frameworks import engines, jax, kernel_code, native, pytorch, tensorflow, xla
from tb_gpu_advisor.frameworks.base import (GENERIC_LABELS, WORK_LABELS, Framework, NamePredicate, action, capture_fix,
                                            fix_rule, never, op_name, op_type)

__all__ = ["Framework", "NamePredicate", "GENERIC_LABELS", "REGISTRY", "UNKNOWN", "action", "fix_rule", "never", "detect",
           "detect_trace", "detect_work", "display_names", "recorded_by", "elementwise", "for_vendor", "elementwise_one", "gemm_kernel", "gemm_kernel_one", "get", "how_to_capture", "own_kernel_launch_fix", "kernel_code_id", "matrix_unit_unknown_one", "not_gemm_kernel", "not_gemm_kernel_one",
           "not_host_work",
           "op_name", "op_type", "ranges_word", "runtime_background_line", "tc_eligible_type"]

if TYPE_CHECKING:  # the trace model imports numpy; importing a format or framework must not
    from tb_gpu_advisor.model.schema import Action
    from tb_gpu_advisor.model.trace import Trace

def _own_fix(fw: Framework, key: str) -> tuple:
    """``fw``'s fixes for ``key`` as its own lookups reach them: the key's, else -- for a job's tag it has none of
    (``rule@tag``) -- its untagged key's, else (``Framework.fix``) the variant's type's, then the rule's."""
    if key in fw.fixes:
        return tuple(fw.fixes[key])
    base, tagged, _ = key.partition("@")
    return _own_fix(fw, base) if tagged else tuple(fw.fix(key))


def _either_writer(writers: tuple[Framework, ...], role: str = "wrote the capture") -> tuple[dict[str, tuple], str]:
    """The fixes and the capture advice of a capture any of ``writers`` may have written (TensorFlow's and JAX's
    XPlane, and its trace viewer JSON, whose events name neither): for every fix key of either writer, the fix both
    give alike said once, else each writer's own, in turn, each headed by whose it is.

    Why: a ``jax.profiler.trace`` around host-only code, kept as its ``<host>.trace.json.gz``, names no framework in its
    events; read with TensorFlow's words it was told "TensorFlow saw the GPU", ``tf.debugging.set_log_device_placement``
    and Keras's ``profile_batch``, and "Profile again on TensorFlow 2.3" (issue #37 class 1: each tool's own way;
    h37-window62).  A window *with* GPU work kept so was told Keras's mixed precision policy, ``steps_per_execution``
    and ``TF_GPU_THREAD_MODE`` alone (h37-words63): every fix a capture of no known writer is told is either both
    writers' or headed by its writer.  ``role``: what the heading says each did ("If JAX ran the work: " where the
    capture is another framework's profiler's, :data:`XLA_WORK`)."""
    # each writer's fix as its module says it, headed, never rewritten (a first letter lower-cased turned a fix opening
    # with a name -- "JAX's ...", "XLA ..." -- into "jAX's", "xLA"; h37-review62)
    keys = dict.fromkeys(k for fw in writers for k in fw.fixes)
    fixes: dict[str, tuple] = {}
    for key in keys:
        own = [(fw, _own_fix(fw, key)) for fw in writers]
        shared = [a for a in own[0][1] if all(a in theirs for _, theirs in own[1:])]
        fixes[key] = tuple(shared) + tuple(dataclasses.replace(a, text=f"If {fw.name} {role}: {a.text}")
                                           for fw, theirs in own for a in theirs if a not in shared)
    advice = "\n".join(f"# {fw.name}:\n{fw.capture_snippet}" for fw in writers)
    return fixes, advice


_XPLANE_FIXES, _XPLANE_ADVICE = _either_writer((tensorflow.FRAMEWORK, jax.FRAMEWORK))


def _either_writer_capture(tags: tuple[str, ...]) -> tuple[str, dict[str, tuple]]:
    """Both writers' capture advice, each composed for the job's loop (``Framework.looped``), and no fixes of either
    alone (the capture's are both writers', :func:`_either_writer`).  Why: one training text served every XPlane of no
    known writer -- a torch_xla client's window that ran no GPU work was told "capture ~10 s of steady-state
    training" (h37-hunt71a's ``tpu_client_verl_transfers``)."""
    parts = [f"# {fw.name}:\n{fw.looped(tags)[0] if fw.looped else fw.capture_snippet}"
             for fw in (tensorflow.FRAMEWORK, jax.FRAMEWORK)]
    return "\n".join(parts), {}

#: A capture whose writer its events do not name: an XPlane (or its trace viewer JSON), which TensorFlow and JAX both
#: write -- TensorFlow's vocabulary for its events, both writers' fixes (each headed by whose it is where they differ)
#: and capture advice.
UNKNOWN = Framework(
    id="unknown", name="an unknown framework",
    labels={**tensorflow.FRAMEWORK.labels, "gpu_user": f"{tensorflow.FRAMEWORK.name} or {jax.FRAMEWORK.name}"},
    input_event=tensorflow.FRAMEWORK.input_event, host_op_event=tensorflow.FRAMEWORK.host_op_event,
    host_only_op_type=tensorflow.FRAMEWORK.host_only_op_type, background_line=tensorflow.FRAMEWORK.background_line,
    program_backend=tensorflow.FRAMEWORK.program_backend, fixes=_XPLANE_FIXES,
    own_step_marks=tensorflow.FRAMEWORK.own_step_marks, step_marks=tensorflow.FRAMEWORK.step_marks,
    step_function=tensorflow.FRAMEWORK.step_function,
    capture_snippet=_XPLANE_ADVICE, looped=_either_writer_capture,
)
_XLA_FIXES, _ = _either_writer((tensorflow.FRAMEWORK, jax.FRAMEWORK), role="ran the work")
#: The work of a program XLA compiled whose front end the capture does not name: XLA's kernels (``loop_*_fusion``,
#: ``wrapped_*``) under another framework's profiler, with no frame into ``jax`` or ``tensorflow`` -- JAX and
#: TensorFlow's ``jit_compile`` name their kernels alike, so the fixes are both front ends' (said once where alike,
#: else each headed "If JAX ran the work: ").  Why: a TensorFlow program under ``torch.profiler`` was read as JAX's
#: by its XLA kernels and told jmp's bf16 policy and ``jnp.dot`` (h37-jaxwords65's *Left* 1, h37-vendor66).  Only
#: the work's words are these (``recorded_by``): the capture's stay its writer's.
XLA_WORK = Framework(
    id="xla", name="XLA (front end unknown)",
    labels={"gpu_user": f"{tensorflow.FRAMEWORK.name} or {jax.FRAMEWORK.name}", "compiler": "XLA",
            "compiled_step": "one XLA-compiled function", "dispatch_call": "compiled call"},
    fixes=_XLA_FIXES, work_kernel=xla.is_compiler_kernel, compiled_step_fuses=True,
    own_step_marks=tensorflow.FRAMEWORK.own_step_marks, step_marks=tensorflow.FRAMEWORK.step_marks,
    step_function=tensorflow.FRAMEWORK.step_function,
    cast_kernels=jax.FRAMEWORK.cast_kernels, cast_ops=jax.FRAMEWORK.cast_ops,
)
#: Every supported framework, in detection order.
REGISTRY: dict[str, Framework] = {f.id: f for f in (tensorflow.FRAMEWORK, jax.FRAMEWORK, pytorch.FRAMEWORK)}
#: Every framework a report may name: the detected ones, ``native`` (no ML framework, never detected by markers) and
#: the work of an XLA front end no event names (:data:`XLA_WORK`, never a capture's writer).
_BY_ID: dict[str, Framework] = {**REGISTRY, native.FRAMEWORK.id: native.FRAMEWORK,
                                 native.NOT_LOADED.id: native.NOT_LOADED, XLA_WORK.id: XLA_WORK}


#: The frameworks' words for a weight update in a kernel's name, where no vendor library's word says a backward
#: (``devices.backward_or_update_one``): every registered framework's ``Framework.update_kernels`` -- an optimizer's
#: name in lower case (``fused_adam_kernel``, ``sgd_update``: ``base.OPTIMIZER_KERNEL``), PyTorch's ``clip_grad``,
#: ATen's ``_foreach_`` ops and Inductor's compiled foreach kernels (``triton_for_fused_*``: a compiled optimizer's
#: step).  Read only to keep a loop from being read as forward passes (``job.kind.forward_loop_kind``), never as
#: training by itself.
_UPDATE_KERNEL_WORD = re.compile("|".join(dict.fromkeys(p for f in REGISTRY.values() for p in f.update_kernels))
                                 or r"(?!)")


def update_kernel_word(name: str) -> bool:
    """A kernel whose name holds a framework's word for a weight update (:data:`_UPDATE_KERNEL_WORD`), whichever
    framework the capture's writer is: a kernel loop under Nsight is any framework's."""
    return bool(_UPDATE_KERNEL_WORD.search(devices.head(name)))


def tc_eligible_type(op_type_: str) -> bool:
    """An op type (TF ``MatMul``, ATen ``addmm``, HLO ``dot``) whose work Tensor Cores can do, in any registered
    framework's vocabulary: a capture's kernels are classified before and whatever the framework detection says."""
    return any(f.tc_eligible_op(op_type_) for f in REGISTRY.values())


_ELEMENTWISE = re.compile("|".join(dict.fromkeys(p for f in REGISTRY.values() for p in f.elementwise_kernels)), re.I)


@functools.lru_cache(maxsize=65536)  # a pure function of the name, asked by several classifiers (prof62)
def elementwise_one(name: str) -> bool:
    """A kernel some framework generates for element-wise work (a fusion candidate): neither a reduction (a
    normalization's included: ``fused_add_rms_norm_kernel`` says ``_add_`` but reduces rows) nor a Tensor Core kernel."""
    name = devices.head(name)
    return (bool(_ELEMENTWISE.search(name)) and not devices.REDUCTION.search(name) and not devices.tensor_core_one(name)
            and not devices.normalization_one(name))


_KERNEL_KINDS = tuple(dict.fromkeys(k for f in REGISTRY.values() for k in f.kernel_kinds))


#: Every framework's ``named_kernel_kinds``, whichever framework the capture was detected as: each pattern holds its
#: library's own namespace or prefix (``tensorflow::functor::``, ATen's ``multi_tensor_apply_kernel``, nvFuser's
#: ``nvfuser_<scheduler>_f<n>``), so a kernel it matches ran that library's code -- the name is the evidence the
#: framework ran, stronger than the detection from host markers (``native`` for an Nsight export of a PyTorch program
#: with no framework hint, one framework where two ran).  Applied per detected framework it would change no kept report
#: (h37-tidy26: over the 47 kept captures not read as PyTorch, only TF's ``ApplyAdamKernel`` in TF's own demo captures
#: matched) and would only lose classes where the detection is wrong.  The serving engines' own kernels
#: (``engines.Engine.kernel_kinds``: vLLM's ``vllm::``, SGLang's parameter structs) are read the same way.
_NAMED_KINDS = tuple((re.compile(p), kind) for p, kind in dict.fromkeys(
    [*(k for f in REGISTRY.values() for k in f.named_kernel_kinds), *(k for e in engines.ENGINES for k in e.kernel_kinds)]))


@functools.lru_cache(maxsize=65536)  # a pure function of the name, asked by several classifiers (prof62)
def kernel_kind_one(name: str) -> str | None:
    """The kernel class a compiler's own naming states (``triton_red_...``: "reduction"), else the class a framework's
    own kernel names by its function (:func:`named_kernel_kind_one`), None where neither states one."""
    return next((kind for prefix, kind in _KERNEL_KINDS if name.startswith(prefix)), None) or named_kernel_kind_one(name)


def stated_kernel_kind(name: str, hlo_class: str | None) -> str | None:
    """The kernel class a compiler states for a kernel (``devices.kernel_class``'s ``kind``): what its XLA fusion's
    opcodes say (``hlo_class``, ``KernelStat.hlo_class``: a reduce makes a reduction) where that is a reduction or
    element-wise work, else what its name says (:func:`kernel_kind_one`).

    Why the HLO's matrix class is left out: the savings' matmul pool (``metrics.flops.gemm_events``) reads kernel
    names, and the classes table must agree with it -- no fusion of the kept JAX captures is a matmul by its HLO and
    not by its name, so none is lost (h37-xlafusion)."""
    if hlo_class in ("reduction", "elementwise"):
        return hlo_class
    return kernel_kind_one(name)


@functools.lru_cache(maxsize=4096)
def named_kernel_kind_one(name: str) -> str | None:
    """The class of a framework's own kernel whose function names its work (``Framework.named_kernel_kinds``: ATen's
    multi-tensor optimizer kernels, TF's ``Apply*`` training kernels), None for any other kernel.

    Why: these kernels were "other" -- no vendor family claims a framework's own optimizer step -- and that class held
    18% of a ``torch.compile`` bf16 step on an H100 (``FusedAdamMathFunctor``) and most of a fused-optimizer step's
    kernel time on an H200 (h37-kernelfam).  Remembered per name: a pure function of the name, asked by the classes
    table, the matmul pool and the kernel checks for the same kernels (~20 patterns searched per ask; prof62)."""
    h = devices.head(name)
    return next((kind for pattern, kind in _NAMED_KINDS if pattern.search(h)), None)


@functools.lru_cache(maxsize=65536)  # a pure function of the name, asked by several classifiers (prof62)
def gemm_kernel_one(name: str) -> bool:
    """A matmul/convolution kernel by its library's naming (``devices.gemm_kernel_one``) or by the kind a compiler's
    naming states (Inductor's ``triton_tem_`` templates: ``kernel_kind_one``)."""
    return devices.gemm_kernel_one(name) or kernel_kind_one(devices.head(name)) == "matmul/conv"


def gemm_kernel(names: list[str]) -> np.ndarray:
    """Bool per kernel name: :func:`gemm_kernel_one`."""
    return np.fromiter((gemm_kernel_one(n) for n in names), dtype=bool, count=len(names))


def matrix_unit_unknown_one(name: str) -> bool:
    """Whether the kernel runs on matrix units is unknown (``devices.matrix_unit_unknown_one``), or it is a compiler's
    GEMM template whose name gives no dtype (Inductor's ``triton_tem_``) and no vendor family says it does."""
    return devices.matrix_unit_unknown_one(name) or (
        kernel_kind_one(devices.head(name)) == "matmul/conv" and not devices.tensor_core_one(name))


def elementwise(names: list[str]) -> np.ndarray:
    """Bool per kernel name: :func:`elementwise_one`."""
    return np.fromiter((elementwise_one(n) for n in names), dtype=bool, count=len(names))


_NOT_GEMM = re.compile("|".join(dict.fromkeys(p for f in REGISTRY.values() for p in f.not_gemm_kernels)) or r"(?!)")


@functools.lru_cache(maxsize=65536)  # a pure function of the name, asked by several classifiers (prof62)
def not_gemm_kernel_one(name: str) -> bool:
    """A kernel that is positively no matmul/convolution, whatever op launched it: a framework's own kernels, a
    library's primitives (sorts, scans), element-wise work, collectives."""
    name = devices.head(name)
    return (bool(_NOT_GEMM.search(name)) or devices.not_gemm_one(name) or elementwise_one(name)
            or devices.kind_one(name) != devices.KIND_KERNEL or kernel_kind_one(name) in ("elementwise", "reduction"))


def not_gemm_kernel(names: list[str]) -> np.ndarray:
    """Bool per kernel name: :func:`not_gemm_kernel_one`."""
    return np.fromiter((not_gemm_kernel_one(n) for n in names), dtype=bool, count=len(names))


def not_host_work(name: str) -> bool:
    """A host event that is runtime bookkeeping, not host compute.  TensorFlow's runtime names can appear in any
    capture of a process that ran TF code, so they are recognised whatever framework the capture is detected as."""
    return tensorflow.is_bookkeeping(name)


def runtime_background_line(line: str) -> bool:
    """A host thread of TensorFlow's runtime (tf.data, event manager, collectives): background, in any capture."""
    return tensorflow.is_background_line(line)


def display_names() -> tuple[str, ...]:
    """The supported frameworks' display names, in registry order (for --help and messages)."""
    return tuple(f.name for f in REGISTRY.values())


def how_to_capture(layouts: Mapping[str, str]) -> str:
    """How to write a profile, one block per framework, then where each format's files go (``layouts``: format id
    -> its layout as users are told it) -- the CLI's "no profiles found" help."""
    lines = ["How to capture a profile (about ten seconds of steady-state steps):"]
    for f in REGISTRY.values():
        for i, hint in enumerate(f.capture_hint):
            lines.append(f"  {(f.name + ':') if i == 0 else '':<12}{hint}")
    for fmt, layout in layouts.items():
        writers = [f.name for f in REGISTRY.values() if f.writes == fmt]
        if writers:
            verb = "writes" if len(writers) == 1 else "write"
            lines.append(f"{' and '.join(writers)} {verb} LOGDIR/{layout}")
    return "\n".join(lines)


def get(framework_id: str | None) -> Framework:
    """The framework of a capture (``capture.framework``); unknown ones get the guide's TensorFlow spelling."""
    return _BY_ID.get(framework_id or "", UNKNOWN)


def kernel_code_id(name: str) -> str:
    """The language a kernel's full name shows (``kernel_code``: "julia", "numba", "kokkos", "nvhpc"), "" where none."""
    code = kernel_code.of_kernel(name)
    return code.id if code is not None else ""


def own_kernel_launch_fix(codes: list[str]) -> Action | None:
    """The launch-configuration fix in the language of a program's own kernels (their :func:`kernel_code_id`) where
    all show the same one (Julia's CUDA.jl, Numba, Kokkos, OpenMP offload), else None (the vendor's CUDA fix stands)."""
    return kernel_code.launch_fix(codes)


def for_vendor(framework_id: str | None, vendor) -> Framework:  # noqa: ANN001 - a vendor module
    """The framework of a capture (:func:`get`) as it talks to a program on ``vendor``'s GPUs: a GPU program with no
    ML framework is told its vendor's own tools and calls (``native.for_vendor``); every framework keeps its own."""
    return native.for_vendor(get(framework_id), vendor)


def detect(host_event_names: Iterable[str], metadata_stats: Iterable[str] = ()) -> Framework:
    """The framework that wrote a capture: from ``/host:metadata`` stats first, then host event names.

    A capture whose host events carry the markers of two frameworks, or none, is ``unknown``.
    """
    stats = set(metadata_stats)
    by_meta = [f for f in REGISTRY.values() if stats.intersection(f.metadata_stats)]
    if len(by_meta) == 1:
        return by_meta[0]
    found: set[str] = set()
    for name in host_event_names:
        for f in REGISTRY.values():
            if f.id not in found and name.startswith(f.host_markers):
                found.add(f.id)
                if len(found) > 1:
                    return UNKNOWN
    return REGISTRY[found.pop()] if len(found) == 1 else UNKNOWN


#: Formats whose profiler traces any GPU program, not a framework's own: Nsight Systems and nvprof (CUDA),
#: rocmProfileData, rocprof and rocprofv3 (HIP: its database, CSV files and JSON).
_ANY_PROGRAM = ("nsys", "nvprof", "rpd", "rocprof", "rocpd", "rocprofv3-csv", "rocprofv3-json")


def _jax_modules(trace: Trace) -> bool:
    """Most of the GPUs' events with an op run it in XLA modules named as JAX names the
    modules it compiles (``<module>/<op>:<type>`` with ``jit_<function>``, ``pmap_<function>``: ``jax.is_module_name``).
    Why: where neither the host's dispatch markers nor ``/host:metadata`` were kept (a trace viewer JSON whose host
    threads were trimmed or not traced), the kernels' modules are still JAX's evidence -- TensorFlow's XLA clusters are
    named ``cluster_<n>`` or after their function (``a_inference_...``), its ops by their scopes (h37-jax61)."""
    named = total = 0
    for d in trace.devices:
        if not len(d) or not d.op_text:
            continue
        jit = np.fromiter((jax.is_module_name(t.split("/", 1)[0]) for t in d.op_text), bool, len(d.op_text))
        ops = d.op_idx[d.op_idx >= 0]
        named, total = named + int(jit[ops].sum()), total + int(ops.size)
    return total > 0 and 2 * named > total


def detect_trace(trace: Trace) -> Framework:
    """The framework of a trace: the only one that writes its format (Kineto, memory snapshots: PyTorch), else the
    one the file itself shows (``Trace.framework_hint``: an Nsight export of a PyTorch job), else :func:`detect` on its
    host event names (thousands at most) and metadata keys."""
    writers = [f for f in REGISTRY.values() if f.writes == trace.format or trace.format in f.also_writes]
    if len(writers) == 1:
        return writers[0]
    hint = getattr(trace, "framework_hint", None)
    if hint in REGISTRY:
        return REGISTRY[hint]
    found = detect(trace.h.names, trace.metadata_keys)
    if found is UNKNOWN and any(trace.format == f.writes for f in REGISTRY.values()) and _jax_modules(trace):
        return jax.FRAMEWORK
    if found is UNKNOWN and trace.format in _ANY_PROGRAM:  # it profiles any GPU program: none named is none at all
        procs = [p for p in trace.producer.get("host_processes", "").split(",") if p]
        # a Python program's window of CUDA calls only (no kernel, no range of its own): it ended in start-up,
        # before the program imported its framework -- a window with the program's NVTX ranges ran its work unseen
        marked = trace.ranges is not None and trace.ranges.idx.size > 0
        if procs and all(native.is_python_process(p) for p in procs) and not marked and \
                not any((d.kind == devices.KIND_KERNEL).any() for d in trace.devices if len(d)):
            return native.NOT_LOADED
        return native.FRAMEWORK
    return found


def ranges_word(trace: Trace, fw: Framework | None = None) -> str:
    """What the trace's marked ranges are called, in words: its reader's name for its range table
    (``HostRanges.source``: NVTX for Nsight, roctx for AMD's tracers), else -- where the format keeps the program's
    ranges among its ops (``Trace.annotations``: Kineto's) -- the name the framework that wrote it gives them
    (``Framework.annotation_ranges``: PyTorch's ``record_function`` ranges).  ``fw``: the capture's framework
    (:func:`detect_trace`'s, asked only where the ranges are annotations).

    Why here: the steps' notes and labels name the ranges they read (``steps.source_label``); the word for them is a
    format's or a framework's, never the steps' own (h37-homes71)."""
    if trace.ranges is None and trace.annotations is not None:
        return (fw or detect_trace(trace)).annotation_ranges
    src = (trace.ranges.source if trace.ranges is not None else "NVTX").split(" (")[0].strip() or "NVTX"
    return src if src.endswith("ranges") else f"{src} ranges"


def _ran_work(fw: Framework, trace: Trace) -> bool:
    """The trace holds ``fw``'s own evidence of running work: a kernel its compiler names (``Framework.work_kernel``)
    or a Python frame of its package (``Framework.work_frame``)."""
    if fw.work_frame is not never and any(fw.work_frame(n) for n in trace.h.names):
        return True
    return fw.work_kernel is not never and any(fw.work_kernel(n) for d in trace.devices for n in d.names)


def detect_work(trace: Trace, writer: Framework) -> Framework:
    """The framework that ran the capture's work: ``writer`` (:func:`detect_trace`), unless the format alone named it
    (Kineto: PyTorch's profiler, whatever ran under it), the capture holds no op of the writer's own
    (``Framework.work_event``: no ATen op at all) and exactly one other framework's own evidence
    (:func:`_ran_work`: frames into ``jax`` or ``tensorflow``, TensorFlow's own kernels); with none, XLA's kernels
    alone are :data:`XLA_WORK` -- the front end that compiled them unknown (h37-vendor66: they read as JAX's).

    Why: a JAX program profiled by ``torch.profiler`` (lutetjeff/cs521-mp2 ``gpu/traces/jax.json``: XLA's
    ``loop_transpose_fusion`` and ``wrapped_broadcast`` launched through ``cuLaunchKernel``, steps in
    ``record_function("jax/iteration_{i}")``, no ATen op) was told ``torch.autocast`` for its fp32 GEMM: the capture
    is PyTorch's, its words how to record it; the work is JAX's, its words how to change it (issue #37, class 1:
    each tool's own way; h37-jaxwords65).  Any op of the writer's own keeps the writer's words: its program ran its
    work, whatever other kernels ran beside it (a PyTorch job launching Triton kernels of its own)."""
    if trace.format not in (writer.writes, *writer.also_writes) or writer.work_event is never:
        return writer  # the events named the framework (XPlane, Nsight): they name the work's already
    if any(writer.work_event(n) for n in trace.h.names):
        return writer
    ran = [f for f in REGISTRY.values() if f is not writer and _ran_work(f, trace)]
    if not ran and _ran_work(XLA_WORK, trace):
        return XLA_WORK
    return ran[0] if len(ran) == 1 else writer


def recorded_by(work: Framework, writer: Framework) -> Framework:
    """``work`` (the framework that ran the program's work) as it talks to a capture ``writer``'s profiler wrote, each
    already written for the job (``Framework.for_job``): the capture's words -- its event reading, its capture advice,
    the fixes that say how to record it (``base.capture_fix``), the labels of its events -- are the writer's; the
    work's -- every other fix, what a fix already in use looks like, what the work's checks mean, the labels of the
    work's levers (``base.WORK_LABELS``) -- are ``work``'s.  ``writer`` itself where they are one.

    Why one composed framework: a rule asks ``ctx.fw`` and never substitutes words; here the answer is two
    frameworks' by role (a JAX program under ``torch.profiler``: ``schedule`` and ``record_function`` to record it,
    jmp's bf16 policy to change it; h37-jaxwords65)."""
    if work is writer or work.id == writer.id:
        return writer
    fixes = {k: v for k, v in work.fixes.items() if not capture_fix(k)}
    fixes.update({k: v for k, v in writer.fixes.items() if capture_fix(k)})
    labels = {k: v for k, v in writer.labels.items() if k not in WORK_LABELS}
    labels.update({k: v for k, v in work.labels.items() if k in WORK_LABELS})
    return dataclasses.replace(
        writer, fixes=fixes, labels=labels, looped=None,  # composed for the job already: never re-looped as the writer's
        not_applicable=work.not_applicable, applies_with_own_input=work.applies_with_own_input,
        fix_applied=work.fix_applied, fix_follows=work.fix_follows, fix_rest=work.fix_rest, fix_needs=work.fix_needs,
        fix_introduces=work.fix_introduces, device_features=work.device_features,
        platform_features=work.platform_features, compiled_step_fuses=work.compiled_step_fuses,
        cast_kernels=work.cast_kernels, cast_ops=work.cast_ops)
