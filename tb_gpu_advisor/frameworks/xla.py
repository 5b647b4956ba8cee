"""XLA, the compiler behind JAX and TensorFlow's jit_compile: its HLO op names, module annotations and fusion kernels.

Shared vocabulary of the two frameworks that compile with XLA (``jax.py``, ``tensorflow.py``) and of the XPlane
reader; XLA names HLO instructions after their opcode (``dot``, ``convolution``, ``custom-call``) or fusion kind,
in lower case, with a ``.N`` suffix.
"""

from __future__ import annotations

import json
import re

from tb_gpu_advisor.devices import head
from tb_gpu_advisor.devices.codes import P_BF16, P_FP8, P_FP16, P_FP32, P_FP64, P_INT8, P_OTHER

#: The profiler's Python tracer (``python_tracer_level=1``, shared by JAX and TensorFlow) names each Python call it
#: records ``$<file>:<line> <function>`` (``$api.py:2307 device_put``, ``$time sleep``): calls, not ranges the program
#: marks, and nested around everything the program does.
PYTHON_TRACER_PREFIX = "$"
#: How an XPlane records the allocator's memory events (``Framework.memory_record`` of JAX and TensorFlow): their
#: allocator writes ``MemoryAllocation`` / ``MemoryDeallocation`` events on the host plane at the profiler's host
#: tracing level 2, its default.
MEMORY_RECORD = ("with the profiler's `host_tracer_level` at 2 (its default) or more: the XPlane then carries the "
                 "allocator's `MemoryAllocation` / `MemoryDeallocation` events")


def is_python_tracer_event(name: str) -> bool:
    return name.startswith(PYTHON_TRACER_PREFIX)


def python_frame_function(name: str) -> str | None:
    """The function of a Python tracer event (``$api.py:2757 block_until_ready`` -> ``block_until_ready``; ``$time
    sleep`` -> ``sleep``), whatever its file and line; None for any other event."""
    if not name.startswith(PYTHON_TRACER_PREFIX):
        return None
    return name.rsplit(" ", 1)[-1] if " " in name else None


#: A Python tracer event's layout: ``$<file>:<line> <function>`` for a Python function (``$dataset_ops.py:4734
#: __next__``, ``$<frozen importlib._bootstrap>:1349 _find_and_load``), ``$<module> <function>`` for a C function
#: (``$builtins next``, ``$time sleep``); the file is its base name, as the tracer writes it.
_PYTHON_FRAME = re.compile(r"^\$(?P<file>.*?)(?::(?P<line>\d+))? (?P<func>\S+)$")


def python_frame(name: str) -> tuple[str, int | None, str] | None:
    """(file or module, line or None, function) of a Python tracer event (:data:`_PYTHON_FRAME`); None for any other
    event."""
    if not name.startswith(PYTHON_TRACER_PREFIX):
        return None
    m = _PYTHON_FRAME.match(name)
    if m is None:
        return None
    line = m.group("line")
    return m.group("file"), int(line) if line is not None else None, m.group("func")


def frame_label(name: str) -> str:
    """A Python tracer event as the report says it (``$dataset_ops.py:4734 __next__`` -> ``__next__
    (dataset_ops.py:4734)``, as a PyTorch ``with_stack`` frame is said; a C function as the program calls it: ``$time
    sleep`` -> ``time.sleep``, ``$builtins next`` -> ``next``); other names as they are."""
    f = python_frame(name)
    if f is None:
        return name
    if f[1] is None:  # a C function: its module's name before it, as the program calls it (``$time sleep``)
        return f[2] if f[0] in ("builtins", "") else f"{f[0]}.{f[2]}"
    return f"{f[2]} ({f[0]}:{f[1]})"


#: The functions by which a loop takes its next batch from an input pipeline, as the Python tracer records them
#: (``python_tracer_level=1``): an iterator's ``__next__`` -- tf.data's (``as_numpy_iterator``'s ``_NumpyIterator``
#: in ``dataset_ops.py``, ``OwnedIterator`` in ``iterator_ops.py``), grain's dataset iterators, a NumPy or the
#: program's own iterator class -- whichever file it is in: ``next(it)`` or ``for batch in it`` calls it each step.
#: ``$builtins next`` is not one: the C call wraps any iterator, a context manager's generator too (contextlib's
#: ``__enter__`` inside every ``jax.device_put``).
_PIPELINE_FUNCTIONS = ("__next__",)


def is_pipeline_frame(name: str) -> bool:
    """A Python tracer frame of the loop taking its next batch from an iterator (:data:`_PIPELINE_FUNCTIONS`): the
    input pipeline's own time, as the DataLoader's ``__next__`` is in a PyTorch capture (issue #37 item 4)."""
    f = python_frame(name)
    return f is not None and f[1] is not None and f[2] in _PIPELINE_FUNCTIONS


#: HLO op types (an HLO instruction name without its ``.N`` suffix, see :func:`hlo_op_type`) whose work
#: Tensor Cores can do: matmuls and convolutions, as XLA GPU names them.  ``custom-call`` is the HLO
#: opcode of library calls (cuBLAS GEMMs, cuDNN convolutions) when the thunk keeps the opcode as its name.
_HLO_MATMUL = re.compile(r"^dot$|^dot_|gemm|matmul|cublas", re.I)  # dot, cublas-gemm, gemm_fusion, triton_gemm, cublas-lt-matmul
_HLO_CONV = re.compile(r"convolution|cudnn-conv|cudnn_conv|conv_fusion", re.I)  # not loop_convert_fusion
HLO_CUSTOM_CALL = "custom-call"
#: Prefix of the ``tf_op`` stat XLA GPU kernels carry: the outermost annotation, the module
#: (``XlaModule:#prefix=..,hlo_module=..,program_id=..#`` parsed down to its name ``XlaModule:``).
XLA_MODULE_ANNOTATION = "XlaModule"
#: The ``.N`` suffixes ``hlo_op_type`` removes.  Not ``re.sub(r"(\.\d+)+$")``: that regex retries from every
#: position, quadratic in the name (an 80 kB hlo_op took 35 s holding the GIL); ``_strip_hlo_suffix`` is linear.
_HLO_SUFFIX_DIGITS = re.compile(r"\d+")


def _strip_hlo_suffix(t: str) -> str:
    """``t`` without its trailing ``(.<digits>)+``, scanning from the end once (linear)."""
    end = len(t)
    while True:
        dot = t.rfind(".", 0, end)
        if dot < 0 or not _HLO_SUFFIX_DIGITS.fullmatch(t, dot + 1, end):
            return t[:end]
        end = dot


def is_xla_module_annotation(tf_op: str | None) -> bool:
    """The ``tf_op`` text is XLA's module annotation (no framework op behind the kernel)."""
    return bool(tf_op) and tf_op.split(":", 1)[0].split("#", 1)[0].strip() == XLA_MODULE_ANNOTATION


def hlo_op_type(hlo_op: str) -> str:
    """Op type of an HLO instruction name: the name without its numeric suffix.

    ``cublas-gemm.3`` -> ``cublas-gemm``; ``loop_add_fusion.2`` -> ``loop_add_fusion``; ``%dot.1`` -> ``dot``.
    XLA names instructions after their opcode (``dot``, ``convolution``, ``custom-call``) or fusion kind.
    """
    t = head(hlo_op).strip().lstrip("%")
    return _strip_hlo_suffix(t) or t


def hlo_op_class(op_type_: str) -> str:
    """What an HLO op type does: matmul, conv, elementwise fusion, reduction fusion, fusion, or other."""
    t = head(op_type_).lower()
    if _HLO_CONV.search(t):
        return "conv"
    if _HLO_MATMUL.search(t) or t == HLO_CUSTOM_CALL:
        return "matmul"
    if t.startswith("loop_") and t.endswith("fusion"):
        return "elementwise fusion"
    if "reduce" in t or "reduction" in t:
        return "reduction fusion" if "fusion" in t else "reduction"
    if t == "fusion" or t.endswith("fusion"):
        return "fusion"
    return "other"


def hlo_tc_eligible_type(op_type_: str) -> bool:
    """HLO op type whose work Tensor Cores can do (dot / GEMM / convolution / custom-call library call).  HLO op
    types are lower case: a capitalised name is another framework's op."""
    return bool(op_type_) and op_type_[0].islower() and hlo_op_class(op_type_) in ("matmul", "conv")



_KERNEL_SUFFIX = re.compile(r"_(\d+)$")


def kernel_instructions(kernel: str) -> tuple[str, ...]:
    """The HLO instruction names an XLA GPU kernel may be named after: XLA names a fusion's kernel after the
    instruction, its ``.`` made ``_`` (``wrapped_convert.25`` -> ``wrapped_convert_25``).  Where a command buffer
    launches the kernels, their op is the buffer (``command_buffer_1``), and the kernel's own name is what finds its
    instruction."""
    m = _KERNEL_SUFFIX.search(kernel)
    return (kernel, f"{kernel[:m.start()]}.{m.group(1)}") if m else (kernel,)


def module_op(op_text: str) -> str:
    """``<module>/<hlo op>`` of an XLA kernel's op text (``jit_step/dot.3:dot`` -> ``jit_step/dot.3``): the key
    a module's HLO instructions are found by."""
    return op_text.rsplit(":", 1)[0] if "/" in op_text else ""


#: One compiled program of a module name, as the profiler's ``/host:metadata`` plane names it: ``jit_dot(79)``, the
#: module and the program id its kernels carry (``program_id`` stat; XLA's ``XlaModule:#...,program_id=79#`` range).
_PROGRAM = re.compile(r"(?P<module>.+)\((?P<program>\d+)\)\Z")


def program_key(module: str, program_id: int) -> str:
    """The name of one compiled program of ``module`` (``jit_dot``, 79 -> ``jit_dot(79)``), as the profiler names it.

    Why a key of its own: JAX compiles one module name into a program per input shape (an un-jitted ``jnp.dot`` on
    six shapes, a jitted step retraced for a smaller last batch), and each program does its own work; the kernels
    name the module and carry the program's id."""
    return f"{module}({program_id})"


def program_of(name: str) -> tuple[str, int] | None:
    """(module, program id) of a program's name (``jit_dot(79)`` -> ``("jit_dot", 79)``); None for a plain module
    name."""
    m = _PROGRAM.match(name)
    return (m.group("module"), int(m.group("program"))) if m else None


#: The host event suffix of a raw JAX/XLA GPU module execution (``<module>:XLA GPU module``): one per step.
GPU_MODULE_SUFFIX = ":XLA GPU module"
#: XLA's own NVTX ranges on a GPU (``xla/backends/gpu/runtime/annotation.cc``, in the ``TSL`` NVTX domain, pushed
#: whenever a tool such as Nsight Systems listens -- no flag turns them on): one around each execution of a compiled
#: module, ``XlaModule:#[prefix=<ops' common name>,]hlo_module=<module>,program_id=<id>#`` (``jit_train_step`` for
#: JAX's ``jax.jit(train_step)``), and one around each thunk it runs, ``Thunk:#[name=<op name>,]hlo_op=<instruction>,
#: unique_hlo_op_id=<id>#``.  A module's ranges are its executions, as ``<module>:XLA GPU module`` events are in an
#: XPlane capture; its thunks' ranges are the framework's ops, never the user's blocks.
#: The host events that name the backend an XLA program was compiled for, as the executables' own TraceMes write
#: them (openxla/xla): the GPU's ``GpuExecutable::ExecuteThunks`` (``[0] GpuExecutable::ExecuteThunks`` in jaxlib
#: 0.11's H100 captures) and its module event ``<module>:XLA GPU module``; the CPU's ``TfrtCpuExecutable::Execute`` /
#: ``TfrtCpuExecutable::ExecuteHelper`` (``xla/pjrt/cpu/cpu_client.cc``) and ``CpuExecutable::``.  A backend-neutral
#: name (``PjitFunction``, ``PjRtCApiLoadedExecutable::Execute``, ``PJRT_LoadedExecutable_Execute``; the
#: stream-executor client's ``PjRtStreamExecutor*``, which older jaxlibs' CPU client used too) says none.
_GPU_EXECUTABLE = ("GpuExecutable::",)
_CPU_EXECUTABLE = ("TfrtCpuExecutable::", "CpuExecutable::")


#: The host events XLA's TPU client writes as it serves a program (openxla/xla's PjRt TPU client): its buffers
#: (``TfrtTpuClient::BufferFromHostBuffer::TfrtTpuBuffer``), its allocator (``DeferredTpuAllocator::Allocate``), the
#: TPU system's transfers (``tpu::System::TransferToDevice``).  Work sent to a TPU, whatever device planes the capture
#: holds: verl's torch_xla worker on a TPU host (``localhost_9012.xplane.pb``) recorded 144 weight uploads so and no
#: TPU plane (h37-hunt71a).
_TPU_CLIENT = ("TfrtTpu", "DeferredTpuAllocator", "tpu::System::")


def client_accelerator(name: str) -> str:
    """"TPU" where the host event ``name`` is XLA's TPU client's own (:data:`_TPU_CLIENT`), "" where it is none."""
    return "TPU" if any(k in name for k in _TPU_CLIENT) else ""


def executable_backend(name: str) -> str:
    """"GPU" or "CPU" where the host event ``name`` is an XLA executable's own of that backend
    (:data:`_GPU_EXECUTABLE`, :data:`_CPU_EXECUTABLE`, :data:`GPU_MODULE_SUFFIX`), "" where it names none."""
    if name.endswith(GPU_MODULE_SUFFIX) or any(k in name for k in _GPU_EXECUTABLE):
        return "GPU"
    return "CPU" if any(k in name for k in _CPU_EXECUTABLE) else ""


NVTX_MODULE_PREFIX = "XlaModule:#"
NVTX_THUNK_PREFIX = "Thunk:#"
_NVTX_MODULE_NAME = re.compile(r"hlo_module=([^,#]+)")
_NVTX_PROGRAM_ID = re.compile(r"program_id=(\d+)")
#: The op names JAX gives a gradient's instructions (``transpose(jvp(MLP))/dot_general``): a backward pass.
AUTODIFF_OP = "transpose(jvp("


def nvtx_module(name: str) -> str | None:
    """The module an XLA module NVTX range executes (``XlaModule:#hlo_module=jit_step,program_id=3#`` ->
    ``jit_step``), None for any other name."""
    if not name.startswith(NVTX_MODULE_PREFIX):
        return None
    found = _NVTX_MODULE_NAME.findall(name)
    return found[-1] if found else None


def nvtx_program(name: str) -> int | None:
    """The program id of an XLA module NVTX range (``XlaModule:#hlo_module=jit_step,program_id=3#`` -> 3), None for
    any other name or a range that names none."""
    if not name.startswith(NVTX_MODULE_PREFIX):
        return None
    found = _NVTX_PROGRAM_ID.findall(name)
    return int(found[-1]) if found else None


def is_nvtx_range(name: str) -> bool:
    """A range XLA pushes itself: a module's execution or a thunk's (:data:`NVTX_MODULE_PREFIX`)."""
    return name.startswith((NVTX_MODULE_PREFIX, NVTX_THUNK_PREFIX))


def is_autodiff_thunk(name: str) -> bool:
    """An XLA thunk NVTX range of a gradient's instruction (:data:`AUTODIFF_OP` in its op name)."""
    return name.startswith(NVTX_THUNK_PREFIX) and AUTODIFF_OP in name


#: XLA's thunk executor runs a ``while`` loop's body from the host, one iteration at a time, where the loop is not in a
#: command buffer: each iteration is a host span ``[iter=<n>]`` (XPlane, under ``[0] GpuExecutable::ExecuteThunks`` and
#: the loop's ``while.<id>`` span) around the launches of that iteration's thunks.
_LOOP_ITERATION = re.compile(r"^\[iter=\d+\]$")


def is_loop_iteration(name: str) -> bool:
    """A host span of one iteration of a ``while`` loop that XLA runs from the host (:data:`_LOOP_ITERATION`)."""
    return name.startswith("[iter=") and bool(_LOOP_ITERATION.match(name))


#: XLA's thunk NVTX range (:data:`NVTX_THUNK_PREFIX`) of a ``while`` loop run from the host: the loop's own thunk
#: (``hlo_op=while.13``, around all its iterations) or a thunk of its body or condition, whose op name holds the loop's
#: path (``name=jit(solve)/while/body/add``, ``.../while/cond/lt``).  In a command buffer the loop is one graph launch
#: (``hlo_op=command_buffer_1``) and no such range is pushed per iteration.
_NVTX_LOOP_OP = re.compile(r"(?:^|[/(])while/(?:body|cond)(?:[/),]|$)")
_NVTX_WHILE_INSTR = re.compile(r"^while(?:\.\d+)?$")
_NVTX_FIELD = re.compile(r"(name|hlo_op)=([^,#]*)")


def is_nvtx_loop_thunk(name: str) -> bool:
    """An XLA thunk NVTX range of a ``while`` loop the host runs: the loop's own thunk or one of its body's or
    condition's (:data:`_NVTX_LOOP_OP`).  The Nsight form of XPlane's ``[iter=N]`` spans: it marks the loop's host
    time, but no iteration boundary (a body's thunks repeat once an iteration, yet nothing says where one ends), so
    no count is read from it."""
    if not name.startswith(NVTX_THUNK_PREFIX):
        return False
    fields = dict(_NVTX_FIELD.findall(name))
    return bool(_NVTX_LOOP_OP.search(fields.get("name", "")) or _NVTX_WHILE_INSTR.match(fields.get("hlo_op", "")))


def is_host_loop(name: str) -> bool:
    """A host span of XLA running a ``while`` loop's iterations from the host, in either capture's form: XPlane's
    ``[iter=N]`` (:func:`is_loop_iteration`) or Nsight's thunk ranges (:func:`is_nvtx_loop_thunk`)."""
    return is_loop_iteration(name) or is_nvtx_loop_thunk(name)


#: What the host does in loops XLA runs from it, where the capture marks no iteration (Nsight's thunk ranges: the
#: loop's time, no count) -- XLA's words, which the rules ask for rather than write.
LOOP_WITHOUT_COUNT = ("running while loops from the host (XLA's ranges of each loop and its body's thunks; they mark no "
                      "iteration's end, so no count is given)")


def is_execution(name: str) -> bool:
    """A host span of one execution of a compiled XLA program (:func:`module_execution`)."""
    return module_execution(name) is not None


def module_execution(name: str) -> str | None:
    """The module a host event executes: a raw XPlane capture's ``<module>:XLA GPU module`` or XLA's module NVTX range
    in an Nsight export (:func:`nvtx_module`); None for any other event."""
    if name.endswith(GPU_MODULE_SUFFIX):
        return name[: -len(GPU_MODULE_SUFFIX)]
    return nvtx_module(name)
#: The kernels XLA:GPU names after the fusion or instruction it compiled -- names no library and no other compiler
#: gives: a fusion's kind and root (``loop_transpose_fusion``, ``input_reduce_fusion``, ``gemm_fusion_dot``, a bare
#: ``fusion_12``), and a single instruction wrapped into a fusion of its own (``wrapped_broadcast``,
#: ``wrapped_convert``), each with the instruction's ``_<n>`` suffix where it has one.  Inductor names its fused
#: kernels ``triton_poi_fused_...`` (no ``_fusion``), ATen ``at::native::...``, cuBLAS and cuDNN by their families.
_COMPILER_KERNEL = re.compile(r"^(?:wrapped_[a-z][a-z0-9_]*|(?:[a-z][a-z0-9]*_)+fusion(?:_[a-z0-9]+)*|fusion(?:_\d+)?)$")


def is_compiler_kernel(name: str) -> bool:
    """A kernel XLA:GPU named (:data:`_COMPILER_KERNEL`): the work of a program XLA compiled (``Framework.work_kernel``)."""
    return bool(_COMPILER_KERNEL.match(head(name)))


#: Element-wise kernels XLA emits: loop fusions of one element-wise op.
#: XLA's element-wise kernels: loop fusions (``loop_<root op>_fusion``, XLA's kLoop emitter: element-wise,
#: broadcast and data-movement work, never a matmul; a reduction root is excluded by the reduction names), and
#: single element-wise instructions XLA wraps into a fusion of their own (``wrapped_tanh``), as un-jitted ops run.
ELEMENTWISE_KERNELS = (r"^loop_\w*fusion", r"^wrapped_(add|multiply|subtract|divide|convert|exp|log|tanh|logistic|"
                       r"select|negate|maximum|minimum|sqrt|rsqrt|power|abs|compare|sine|cosine)\b", r"_add_", r"_mul_")


# ---------------------------------------------------------------------------------------------- FLOPs from HLO
# What XLA's instructions compute, for the FLOP rows read from a module's HLO (``formats/xplane/hlo.py`` reads the
# proto and walks the program; the formulas and the names of XLA's library calls live here).  A multiply-add is
# 2 FLOPs; padding and masked-out elements a library computes anyway are counted (the executed work).

#: HLO opcodes of matmul and convolution work, and of the instructions that call other computations.
HLO_DOT, HLO_CONVOLUTION, HLO_FUSION, HLO_WHILE = "dot", "convolution", "fusion", "while"
#: The opcode of ``lax.cond``/``lax.switch``: it calls one computation per branch, and runs one of them.
HLO_CONDITIONAL = "conditional"
#: Opcodes whose called computations run once per execution of the caller (a conditional: one branch of them).
HLO_CALLERS = ("call", HLO_CONDITIONAL, "async-start")
#: The dtype conversion opcode, and the opcodes that compute nothing -- they name, move or re-lay out values: an
#: instruction whose computations hold a convert and nothing outside these is a cast.  XLA names a fusion after its
#: root, so a bf16 ``sine`` computed in f32 is a ``loop_convert_fusion`` (``parameter, convert, sine, convert``):
#: the name says the last step, the opcodes say the work (h37-convertfusion).
HLO_CONVERT = "convert"
HLO_CAST_ONLY_OPCODES = frozenset({
    HLO_CONVERT, "bitcast-convert", "parameter", "constant", "bitcast", "reshape", "copy", "transpose", "broadcast",
    "slice", "concatenate", "tuple", "get-tuple-element",
})
#: What a fused computation's opcodes say its kernel does (XLA's HLO semantics, ``hlo_opcode.h``), for the kernel
#: class of a fusion whose name says only its root or a number (``fusion_338``: a Triton softmax holding two reduces;
#: h37-xlafusion).  Matrix work: a dot or convolution (a Triton GEMM fusion holds its dot).  Reductions: a reduce,
#: a window reduce (pooling) and the pooling gradient's select-and-scatter.  Element-wise: maths on each element and
#: the opcodes that only move or re-lay out values -- one pass over the data.  Anything else (a sort, a scatter that
#: combines, random numbers, another library call) is named by none of them: the kernel stays unclaimed.
HLO_MATRIX_OPCODES = frozenset({HLO_DOT, HLO_CONVOLUTION, "ragged-dot", "scaled-dot"})
HLO_REDUCE_OPCODES = frozenset({"reduce", "reduce-window", "select-and-scatter"})
HLO_ELEMENTWISE_OPCODES = frozenset({
    "abs", "add", "and", "atan2", "cbrt", "ceil", "clamp", "compare", "complex", "cosine", "count-leading-zeros",
    "divide", "erf", "exponential", "exponential-minus-one", "floor", "imag", "is-finite", "log", "log-plus-one",
    "logistic", "maximum", "minimum", "multiply", "negate", "not", "or", "popcnt", "power", "real", "reduce-precision",
    "remainder", "round-nearest-afz", "round-nearest-even", "rsqrt", "select", "shift-left", "shift-right-arithmetic",
    "shift-right-logical", "sign", "sine", "sqrt", "stochastic-convert", "subtract", "tan", "tanh", "xor",
    "iota", "pad", "reverse", "dynamic-slice", "dynamic-update-slice", "gather",
})
#: cuBLAS GEMM custom calls (XLA GPU ``cublas_cudnn.h``): operands lhs, rhs[, bias, scales]; the result is
#: (output, workspace) or (output, amax, workspace); ``gemm_backend_config`` holds the dot dimension numbers.
CUBLAS_GEMM_TARGETS = frozenset({"__cublas$gemm", "__cublas$lt$matmul", "__cublas$lt$matmul$f8"})
#: cuDNN convolution custom calls: the instruction keeps the forward convolution's window and dimension numbers.
_CUDNN_CONV_ROLES = {  # target -> (input, kernel, output) as operand index, -1 = the result's first element
    "__cudnn$convForward": (0, 1, -1),
    "__cudnn$convBiasActivationForward": (0, 1, -1),
    "__cudnn$convForwardGraph": (0, 1, -1),
    "__cudnn$convBackwardInput": (-1, 1, 0),
    "__cudnn$convBackwardFilter": (0, -1, 1),
}
#: cuDNN fused attention custom calls (``__cudnn$fmhaSoftmax``, ``...Backward``; XLA before 2024 spelt them
#: ``__cudnn$fhma``): operands Q, K, V first.
_CUDNN_FMHA_PREFIXES = ("__cudnn$fmha", "__cudnn$fhma")
#: FlashAttention's backward runs 5 matmuls where the forward runs 2: S = QK^T recomputed, dV = P^T dO,
#: dP = dO V^T, dQ = dS K, dK = dS^T Q -- 3 of QK^T's size and 2 of PV's, ~2.5x the forward.
FMHA_BACKWARD_BMM1, FMHA_BACKWARD_BMM2 = 3, 2
#: A causal mask lets cuDNN skip the blocks above the diagonal: about half the work of the unmasked product.
CAUSAL_FRACTION = 0.5
#: JAX's default attention layout (B, T, N, H): K's sequence dimension (T), where the call's backend config
#: gives no dimension numbers.
_BTNH_SEQ = (1,)
#: XLA element types -> the precision codes of ``devices.codes``.
_PRECISION = {"f32": P_FP32, "f16": P_FP16, "bf16": P_BF16, "f64": P_FP64, "s8": P_INT8, "u8": P_INT8,
              "s4": P_INT8, "u4": P_INT8}

Dims = tuple[int, ...]
#: (lhs contracting, rhs contracting, lhs batch, rhs batch), as DotDimensionNumbers holds them.
DotDims = tuple[Dims, Dims, Dims, Dims]


def precision_code(dtype: str) -> int:
    """The ``devices.codes`` P_* code of an XLA element type name (``bf16``, ``f8e4m3fn``...); P_OTHER otherwise."""
    if dtype.startswith(("f8", "f4")):
        return P_FP8
    return _PRECISION.get(dtype, P_OTHER)


def numel(dims: Dims) -> int:
    """Elements of an array (a negative, i.e. corrupt, dimension counts as 0)."""
    n = 1
    for d in dims:
        n *= max(d, 0)
    return n


def _prod_at(dims: Dims, at: Dims) -> int:
    """Product of ``dims`` at the indices ``at``; ValueError for an index the array does not have."""
    n = 1
    for i in at:
        if not 0 <= i < len(dims):
            raise ValueError(f"dimension {i} of a rank-{len(dims)} array")
        n *= max(dims[i], 0)
    return n


def dot_flops(result: Dims, lhs: Dims, lhs_contracting: Dims) -> float:
    """A dot: 2 x (result elements) x (product of the lhs's contracting dimensions).  Batch dimensions are in
    the result already; a dot without contracting dimensions is an outer product (1 multiply per element)."""
    return 2.0 * numel(result) * _prod_at(lhs, lhs_contracting)


def conv_flops(output: Dims, kernel: Dims, kernel_input_feature: int, kernel_spatial: Dims) -> float:
    """A convolution: 2 x (output elements) x (kernel input features) x (kernel window elements).

    The kernel's input-feature dimension is already divided by ``feature_group_count`` (grouped and depthwise
    convolutions), and a ``batch_group_count`` convolution's output batch is divided the same way, so the
    formula holds for both; zero padding is counted (cuDNN computes it).
    """
    return 2.0 * numel(output) * _prod_at(kernel, (kernel_input_feature,)) * _prod_at(kernel, kernel_spatial)


def depthwise_conv(feature_groups: int, batch_groups: int, inp: Dims, kernel: Dims, input_batch: int,
                   kernel_input_feature: int) -> bool:
    """Whether an HLO convolution (or cuDNN conv custom call) is depthwise: one input channel per group.

    Two forms: ``feature_group_count > 1`` with a kernel input-feature dimension of 1 (``groups == C_in``, ATen's
    rule in ``aten_flops``: the forward and data gradient of JAX's/Flax's depthwise layers), and ``batch_group_count
    > 1`` equal to the input's batch dimension -- the weight gradient of a depthwise layer, which XLA writes with the
    channels on the batch dimension, one per group.  Why: such a convolution has no channel sum to give a matrix
    tile its inner dimension, so its FLOPs run on the vector units (``model.trace.FLOP_KINDS``' ``depthwise``) and
    counted as ``conv`` they swelled MFU.  0 (an unset proto field) is XLA's default of 1 group.
    """
    if feature_groups > 1 and 0 <= kernel_input_feature < len(kernel) and kernel[kernel_input_feature] == 1:
        return True
    return batch_groups > 1 and 0 <= input_batch < len(inp) and inp[input_batch] == batch_groups


def custom_call_kind(target: str) -> str | None:
    """``matmul`` / ``conv`` / ``attention`` for the library calls whose FLOPs the shapes give, else None."""
    if target in CUBLAS_GEMM_TARGETS:
        return "matmul"
    if target in _CUDNN_CONV_ROLES:
        return "conv"
    if target.startswith(_CUDNN_FMHA_PREFIXES):
        return "attention"
    return None


def fusion_class(opcodes: frozenset[str], targets: frozenset[str]) -> str | None:
    """The kernel class (``devices.kernel_class``'s words) of a fusion whose computations hold ``opcodes`` and call
    the library ``targets`` (custom calls), by :data:`HLO_MATRIX_OPCODES` and its neighbours: matrix work first (a
    fused matmul is a matmul whatever else it does), then a reduction, then element-wise where every opcode is one;
    None where an opcode is none of them.

    Why: XLA names a fusion's kernel after its root or just numbers it, so the name hides what the kernel does; the
    program it runs does not (a Triton softmax, ``fusion_338``, held 22% of a GPT step's GPU time as "other")."""
    if opcodes & HLO_MATRIX_OPCODES or any(custom_call_kind(t) is not None for t in targets):
        return "matmul/conv"
    if targets:  # a library call that is no matmul: its work is the library's
        return None
    rest = opcodes - HLO_CAST_ONLY_OPCODES - HLO_ELEMENTWISE_OPCODES
    if not rest:
        return "elementwise"
    return "reduction" if rest <= HLO_REDUCE_OPCODES else None


def conv_roles(target: str) -> tuple[int, int, int]:
    """(input, kernel, output) of a cuDNN convolution call as operand indices, -1 for its result."""
    return _CUDNN_CONV_ROLES[target]


def backend_config(raw: bytes) -> dict:
    """An instruction's ``backend_config`` JSON (XLA GPU writes its configs as JSON), {} when absent or not JSON."""
    if not raw or raw[:1] != b"{":
        return {}
    try:
        cfg = json.loads(raw)
    except (ValueError, RecursionError):
        return {}
    return cfg if isinstance(cfg, dict) else {}


def _dims_list(v: object) -> Dims:
    """A JSON list of dimension numbers (proto JSON writes int64 as strings) as ints; TypeError/ValueError
    otherwise."""
    if not isinstance(v, list):
        raise TypeError("dimension numbers are not a list")
    return tuple(int(x) for x in v)


def json_dot_dims(d: object) -> DotDims | None:
    """DotDimensionNumbers from a backend config's JSON object, None where it has none."""
    if not isinstance(d, dict):
        return None
    return (_dims_list(d.get("lhs_contracting_dimensions", [])), _dims_list(d.get("rhs_contracting_dimensions", [])),
            _dims_list(d.get("lhs_batch_dimensions", [])), _dims_list(d.get("rhs_batch_dimensions", [])))


def gemm_dot_dims(cfg: dict) -> DotDims | None:
    """The dot dimension numbers of a cuBLAS call: ``gemm_backend_config`` in GpuBackendConfig (current XLA),
    or the GemmBackendConfig itself at the top level (XLA before 2023)."""
    gemm = cfg.get("gemm_backend_config", cfg)
    return json_dot_dims(gemm.get("dot_dimension_numbers")) if isinstance(gemm, dict) else None


def known_trip_count(cfg: dict) -> int | None:
    """A ``while``'s trip count where XLA proved it (``{"known_trip_count":{"n":"12"}}``), else None."""
    n = cfg.get("known_trip_count")
    try:
        v = int(n.get("n")) if isinstance(n, dict) else None
    except (TypeError, ValueError):
        return None
    return v if v is not None and v >= 0 else None


def attention_flops(target: str, q: Dims, k: Dims, v: Dims, cfg: dict) -> float:
    """A cuDNN fused attention call, from its Q, K, V shapes (docs/xla-flops.md):

    forward = 2·numel(Q)·Sk (S = QK^T) + 2·numel(O)·Sk (O = PV), with numel(O) = numel(Q)·Dv/D and
    Dv/D = numel(V)/numel(K): for B batches, H heads, D = Dv: 4·B·H·Sq·Sk·D.  Grouped-query attention (fewer K/V
    heads) needs nothing more.  The backward (target ending ``Backward``) runs 3 products of QK^T's size and 2 of
    PV's (FlashAttention recomputes S): 2.5x the forward when Dv = D.  A causal mask halves both.  Sk comes from
    K's sequence dimensions in the call's dimension numbers, else JAX's (B, T, N, H) layout.
    """
    cfg = cfg.get("cudnn_fmha_backend_config", cfg)
    if not isinstance(cfg, dict):
        cfg = {}
    sk = _prod_at(k, _key_seq_dims(k, cfg))
    ratio_v = numel(v) / numel(k) if numel(k) else 1.0
    bmm1 = 2.0 * numel(q) * sk
    bmm2 = bmm1 * ratio_v
    flops = FMHA_BACKWARD_BMM1 * bmm1 + FMHA_BACKWARD_BMM2 * bmm2 if target.endswith("Backward") else bmm1 + bmm2
    mask = str(cfg.get("mask_type", ""))
    return flops * CAUSAL_FRACTION if "CAUSAL" in mask or cfg.get("is_causal_mask") is True else flops


def _key_seq_dims(k: Dims, cfg: dict) -> Dims:
    """K's sequence dimensions: those of K neither batch nor contracted in QK^T (forward dimension numbers), or
    contracted in dQ = dS·K (backward); JAX's (B, T, N, H) layout where the config has neither."""
    fwd = json_dot_dims(cfg.get("bmm1_dot_dimension_numbers"))
    if fwd is not None:
        used = set(fwd[1]) | set(fwd[3])
        if not used <= set(range(len(k))):
            raise ValueError(f"K dimensions {sorted(used)} of a rank-{len(k)} array")
        return tuple(i for i in range(len(k)) if i not in used)
    bwd = json_dot_dims(cfg.get("bmm1_grad_gemm2_dot_dimension_numbers"))
    if bwd is not None:
        return bwd[1]
    return _BTNH_SEQ if len(k) == 4 else ()


# ---------------------------------------------------------------------------------------------- collectives in HLO

#: Collective opcodes (and their async ``-start`` halves) whose message the operand shapes give; the ``-done``
#: halves carry none.  What one rank sends in: its operand(s), as PyTorch's ``In msg nelems`` counts it.
HLO_COLLECTIVES = frozenset({
    "all-reduce", "all-reduce-start", "all-gather", "all-gather-start", "reduce-scatter", "all-to-all",
    "collective-permute", "collective-permute-start",
})
#: Collectives whose first operand alone is the message (the in-place forms add output buffers and offsets).
_FIRST_OPERAND_ONLY = frozenset({"collective-permute", "collective-permute-start"})


def collective_operands(opcode: str, n_operands: int) -> int:
    """How many of a collective's operands make its message (all of a variadic all-reduce's, the first of a
    collective-permute's)."""
    return min(n_operands, 1) if opcode in _FIRST_OPERAND_ONLY else n_operands
