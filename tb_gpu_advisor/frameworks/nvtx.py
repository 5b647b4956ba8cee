"""NVTX range names: which are a framework's op, which a library's own call, which mark a training step.

NVTX ranges are how code marks itself under Nsight Systems (``torch.cuda.nvtx.range_push("forward")``,
``nvtx.annotate``).  Three kinds reach a capture, told apart by their names:

* **ops**: PyTorch's ``--pytorch=autograd-nvtx`` (``torch.autograd.profiler.emit_nvtx``) wraps every ATen op
  and ``record_function`` in a range named ``aten::mm, seq = 12, op_id = 34[, sizes = [...], input_op_ids =
  [...]]`` (``torch/csrc/profiler/util.cpp``, ``getNvtxStr``: ``seq`` where autograd numbered the op, ``op_id``
  on every range); FSDP's hooks (``FSDP::pre_forward (encoder.block.3)``) come with the same suffix.  They are
  ops, read like the ``cpu_op`` events of a PyTorch trace: their name is the part before the first suffix.  A
  user's own ``record_function("train_step")`` gets the same suffix (``train_step, op_id = 7``) but no ``seq``
  and no namespace: it stays the user's block (:func:`op_name`), as Kineto's ``user_annotation`` does;
* **XLA's ranges**: XLA on a GPU pushes ``XlaModule:#hlo_module=jit_train_step,program_id=7#`` around each
  execution of a compiled module and ``Thunk:#hlo_op=fusion.3,unique_hlo_op_id=42#`` around each thunk (``xla``):
  the framework's executions and ops, never the user's blocks; a module's executions mark its steps;
* **TensorFlow's ranges**: NVIDIA's TensorFlow builds under ``TF_ENABLE_NVTX_RANGES=1`` push ``MatMul: dense/MatMul``
  around each op in the ``tensorflow-core`` domain (``tensorflow.NVTX_OP_DOMAIN``): ops;
* **library ranges**: NCCL's own domain (``ncclAllReduce``, ``ncclGroupStart``), PyTorch's collective wrappers
  (``record_param_comms``, ``c10d::allreduce_``, ``nccl:all_reduce``), cuDNN/cuBLAS and Transformer Engine
  internals: never a step, never the user's block.
* **annotation ranges**: NVIDIA's PyProf / DLProf annotation (``pyprof.nvtx.init()``,
  ``nvidia_dlprof_pytorch_nvtx.init()``) wraps every ``torch`` / ``Tensor`` / ``torch.nn.functional`` call in a range
  whose text is a Python dict: ``{'mod': 'Tensor', 'op': 'cuda', 'args': [...]}`` is the framework's op
  ``Tensor.cuda`` (read like an ATen op), and ``{'traceMarker': [...], 'funcStack': '...'}`` around it, or DLProf's
  ``{"model_config": ...}``, is the annotation tool's own bookkeeping (a library range).  A name that is a dict
  literal is written by a program for a program, never a block a user named;
* **user ranges**: everything else -- the blocks of the user's own code (``forward``, ``data``, ``train_step``,
  Megatron's ``forward-backward``, NeMo's ``train_step`` ...).  A user range named like a step or an iteration
  marks steps (:func:`is_step_name`); without one, the most repeated top-level user range does
  (``steps.detect``).
"""

from __future__ import annotations

import re

from tb_gpu_advisor.frameworks import jax, pytorch, tensorflow, xla

#: The suffixes PyTorch's autograd NVTX ranges carry after the op's name (``torch/csrc/profiler``: ``seq``,
#: ``op_id``, ``sizes``, ``input_op_ids``; ``stashed seq`` on backward ops).  A reader may cut them off itself
#: (the Nsight reader does it in SQL): the name is the text before the first of them.
OP_SUFFIXES = (", seq = ", ", op_id = ", ", sizes = ", ", input_op_ids = ", ", stashed seq = ")
_OP_SUFFIX = re.compile("|".join(re.escape(x) for x in OP_SUFFIXES))
#: The suffix of an op that made an autograd node (its sequence number): only grad mode numbers ops, so a forward
#: whose ops carry it records its graph for a backward pass.
GRAD_SEQ = ", seq = "
#: Names PyTorch's autograd NVTX gives ops even without a suffix.
_OP_PREFIX = ("aten::", "autograd::", "torch::autograd::", "prims::", "c10d::", "profiler::", "cudnn::")

#: The name given to an annotation tool's own ranges (PyProf / DLProf trace markers and configuration records).
ANNOTATION_PREFIX = "pyprof::"
#: PyProf / DLProf's op range: a Python (or JSON) dict whose first keys are the op's module and name.
_ANNOTATED_OP = re.compile(r"""^\{\s*['"]mod['"]\s*:\s*['"]([^'"]*)['"]\s*,\s*['"]op['"]\s*:\s*['"]([^'"]*)['"]""")
#: Any other dict-literal text: its first key names what the annotation tool recorded.
_ANNOTATION = re.compile(r"""^\{\s*['"]([A-Za-z_][A-Za-z0-9_]*)['"]\s*:""")
#: The last frame of a PyProf trace marker's ``funcStack`` (``'/<module>/Net::forward/conv2d'``).
_FUNC_STACK = re.compile(r"""['"]funcStack['"]\s*:\s*['"][^'"]*/([^/'"]+)['"]""")

#: Ranges a library opens around its own calls: NCCL's NVTX domain (``ncclAllReduce``, ``ncclGroupEnd``...),
#: PyTorch's collective wrappers, FSDP/DDP hooks, the optimizer's and autograd's wrappers, cuDNN, cuBLAS and
#: Transformer Engine (``TE::``) internals.
_LIBRARY_PREFIX = (ANNOTATION_PREFIX, "nccl", "NCCL", "c10d::", "record_param_comms", "FSDP::", "DDP::", "Optimizer.", "autograd::",
                   "torch::autograd::", "cudnn", "cuDNN", "cublas", "cuBLAS", "TE::", "transformer_engine",
                   "CUDA_GRAPH", "cudaGraph", "cub::", "thrust::")
#: NVTX domains of libraries, by name (``nvtxDomainCreate``): ranges in them are never the user's blocks.  NCCL's
#: ``NCCL`` holds a range per API call (``ncclAllReduce``, ``ncclGroupEnd``: ``NVTX3_FUNC_WITH_PARAMS``, off with
#: ``NCCL_NVTX_DISABLE=1``); DALI's ``DALI`` its pipeline's and operators' work on its own threads
#: (``dali/core/nvtx.cc``); RAPIDS' ``libcudf`` and ``cudf_python`` each cuDF call (``CUDF_FUNC_RANGE``,
#: ``@annotate(..., domain="cudf_python")``) -- repeated as often as a step, never one; CUDA's C++ core libraries
#: (CCCL: CUB, Thrust) ``CCCL`` a range per device algorithm (``cub::DeviceScan::InclusiveScan``), which a model calls
#: once per layer (YiconRain/profiling's SGLang exports: 209 in one prefill; h37-survey72).
LIBRARY_DOMAINS = frozenset({"NCCL", "nccl", "cuDNN", "cuBLAS", "cuBLASLt", "CUDA", "NVSHMEM", "TransformerEngine",
                             "cuFFT", "cuSPARSE", "UCX", "MPI", "NVIDIA NCCL", "DALI", "libcudf", "cudf_python",
                             "CCCL"})
#: NVTX domains a framework pushes its own op ranges in (TensorFlow's ``tensorflow-core``): every range there is an op.
FRAMEWORK_OP_DOMAINS = frozenset({tensorflow.NVTX_OP_DOMAIN})


def is_framework_op_domain(domain: str) -> bool:
    """A framework's op domain (:data:`FRAMEWORK_OP_DOMAINS`): its ranges are ops, read like autograd's."""
    return domain in FRAMEWORK_OP_DOMAINS


#: The library domains whose ranges are communication between processes (MPI's ``MPI_Send`` / ``MPI_Recv`` as
#: Nsight's MPI trace writes them, NCCL's collectives, NVSHMEM's and UCX's transfers): a host inside one in the GPU's
#: idle waits for its peers -- another rank's data or its turn -- and runs none of the program's code.
COMMUNICATION_DOMAINS = frozenset({"NCCL", "nccl", "NVIDIA NCCL", "MPI", "NVSHMEM", "UCX"})
#: Of those, the libraries whose calls enqueue the communication on a CUDA stream and return: NCCL's collectives and
#: point-to-point calls are asynchronous to the host (its documentation: they return once the operation is enqueued
#: on the stream), so the host inside one is launching a collective kernel, never waiting for its peers -- the GPU's
#: idle then is the launch's, and the collective kernel itself shows the transfer.  CS336's overlapped DDP
#: (``nsys_ranks/ddp_overlap_rtx3090``): ``ncclAllReduce`` 393 us a call on the host, inside the backward's hooks.
ENQUEUING_COMMUNICATION_DOMAINS = frozenset({"NCCL", "nccl", "NVIDIA NCCL"})
#: The communication domains whose calls the host may sit in until its peers answer (MPI's ``MPI_Wait``, a blocking
#: ``MPI_Allreduce``): GPU idle inside one is the step waiting on communication (``metrics.breakdown.comm_call_spans``).
WAITING_COMMUNICATION_DOMAINS = COMMUNICATION_DOMAINS - ENQUEUING_COMMUNICATION_DOMAINS

#: A loop's counter written after a range's name, whatever the punctuation around it: ``12``, `` #12``, ``=12``,
#: ``[12]``, `` (12)``, `` 12/100`` (``f"Step {i}/{n}"``), ``[96,100)`` (Grendel-GS's ``f"iteration[{i},{i+bsz})"``,
#: the images a step trains) -- no letter in it, so nothing that names another block (``_ga_step_0``, a
#: micro-batch's).  The form does not say what the number counts; the word before it does.
_COUNTER = r"(?:[^A-Za-z]*\d[^A-Za-z]*)?"
#: A user range that marks a step: ``step``, ``train_step``, ``training_step 12``, ``iteration 3``, ``iter_7``,
#: ``Step#4``, ``batch 12``, ``Step 3/100``, ``iteration[96,100)``, and a training step the program names after its
#: model or its parallelism (``moe_train_step``, ``ddp_train_step``, ``f"profile_{model}_train_step"``,
#: ``meta_train_step``, ``3_train_step``: words before ``train``, never before a bare ``step`` -- an ``ema_step`` or a
#: ``decode_step`` is no training step), a numbered forward-backward (``fwd_bwd_12``: one pass each way, a step; never
#: ``fwd_bwd`` alone, Megatron's schedule's range) -- but no optimizer or scheduler step (``optimizer.step``,
#: ``lr_scheduler.step``), which runs inside a training step.
_STEP_NAME = re.compile(r"^(?:(?:[A-Za-z0-9]+[-_ .])+(?=train))?"
                        r"(?:(?:train(?:ing)?|fwd_?bwd|forward[-_ ]backward)[-_ .]?)?(?:step|iter(?:ation)?|batch)"
                        + _COUNTER + r"$|^(?:train(?:ing)?[-_ .]?)?(?:step|iter(?:ation)?)[-_ #:=]*\d+\b"
                        r"|^(?:fwd[-_ ]?bwd|forward[-_ ]?backward)[-_ #:=]*\d+$", re.I)
#: An inference loop's own turn, its counter named after inference: ``inference_step_{step}`` (``record_function``
#: around each ``model.generate``), ``inference_iteration_{i}``, ``inference_run_{i}``, ``inference_batch_{i}``,
#: ``Inference batch {i}``, ``Inference {r}`` (public benchmarks, SURVEY h37-nvtx69) -- the turn of a loop of forward
#: passes, as ``batch 3`` is; never ``inference`` alone (a range around the whole run) nor a decode step inside one
#: (``inference_decode_step_{t}``: one token of a generation).  A serving loop's turn the same way (h37-names70):
#: ``serving_step {k}``, ``serve_step``, ``serve_request {k}``, ``serving batch 3``, and a numbered ``request {k}`` --
#: one request served per turn; never ``serve`` / ``serving`` alone (a range around the whole server's run).
_INFERENCE_STEP_NAME = re.compile(r"^(?:infer(?:ence)?|serv(?:e|ing))(?:[-_ .]?(?:step|iter(?:ation)?|batch|run|pass|"
                                  r"request)%s|[^A-Za-z]*\d[^A-Za-z]*)$|^requests?[-_ #:=]*\d+[^A-Za-z]*$"
                                  % _COUNTER, re.I)
_NOT_STEP = re.compile(r"optim|schedul|lr[-_]|zero[-_ ]?grad|scaler|sampler|warmup", re.I)
#: The NVTX range a capture's advice asks the program to mark its steps with, by the job's work (``Job.work``), and
#: what it marks: named so that :func:`is_step_name` reads it as a step, and in the job's own words -- a forward
#: pass is no ``train_step``, nor is a native program's step of no known kind (h37-left37).
STEP_RANGES = {"training": ("train_step", "steps"), "inference": ("batch", "forward passes"),
               "any_work": ("step", "steps")}


def step_range(work: str) -> dict[str, str]:
    """The ``{step_range}`` and ``{steps}`` a capture advice's code is filled with for a job doing ``work``
    (a key of :data:`STEP_RANGES`; a training step where the job is not known)."""
    name, steps = STEP_RANGES.get(work, STEP_RANGES["training"])
    return {"step_range": name, "steps": steps}


def op_name(text: str) -> tuple[str, bool]:
    """(the range's name, whether it is a framework op): ``aten::mm, seq = 1, op_id = 2`` -> (``aten::mm``, True);
    ``{'mod': 'Tensor', 'op': 'cuda', ...}`` -> (``Tensor.cuda``, True); ``forward`` -> (``forward``, False);
    ``train_step, op_id = 7`` -> (``train_step``, False): a user's ``record_function`` under ``emit_nvtx``."""
    m = _OP_SUFFIX.search(text)
    if m is not None:
        name = text[: m.start()]
        return name, GRAD_SEQ in text or is_framework_scope(name)
    if text.startswith("{"):
        annotated = annotation_name(text)
        if annotated is not None:
            return annotated
    return text, text.startswith(_OP_PREFIX)


def has_op_suffix(text: str) -> bool:
    """The text carries PyTorch's autograd NVTX suffix (:data:`OP_SUFFIXES`): an op's, or a ``record_function``'s."""
    return _OP_SUFFIX.search(text) is not None


def annotation_name(text: str) -> tuple[str, bool] | None:
    """A PyProf / DLProf annotation range's (name, is an op), or None for any other text.  Its op ranges name the
    framework's call (``Tensor.cuda``, ``torch.nn.functional.conv2d``); its trace markers and configuration records
    are the tool's own (``pyprof::conv2d`` after the marker's last Python frame, ``pyprof::model_config``): each
    row's text is unique (it holds the call's shapes), so the name is what makes them few."""
    module = pytorch.module_hook_name(text)
    if module is not None:  # a forward hook's marker: the module by its name, the shapes cut off (its row's own)
        return module, False
    m = _ANNOTATED_OP.match(text)
    if m is not None:
        mod, op = m.group(1), m.group(2)
        return (f"{mod}.{op}" if mod else op), True
    tf_op = tensorflow.nvtx_detailed_op(text)
    if tf_op is not None:  # TensorFlow's detailed op range: the op, as its basic range names it
        return tf_op, True
    m = _ANNOTATION.match(text)
    if m is None:
        return None
    frame = _FUNC_STACK.search(text)
    return ANNOTATION_PREFIX + (frame.group(1) if frame is not None else m.group(1)), False


#: A namespaced op (``aten::mm``, ``c10d::allreduce_``, ``mylib::fused_op``, ``autograd::engine::evaluate_function:
#: MmBackward0``) or an autograd node (``MmBackward0``): what PyTorch's dispatcher and autograd engine record.
_NAMESPACED = re.compile(r"^[A-Za-z_][\w.]*::|^\w+Backward\d*$")


def is_framework_scope(name: str) -> bool:
    """A suffixed autograd NVTX range's name (suffix cut off) that is PyTorch's own, not the user's
    ``record_function``: a namespaced op or autograd node (:data:`_NAMESPACED`), or a scope PyTorch opens around its
    own code (``pytorch.is_own_scope``: the DataLoader's ``__next__``, ``Optimizer.step#SGD.step``)."""
    return bool(_NAMESPACED.match(name)) or pytorch.is_own_scope(name)


def is_module_hook(text: str) -> bool:
    """The text is a framework's forward-hook marker (``pytorch.module_hook_name``: NVIDIA's layer-wise hooks under
    vLLM, SGLang, TensorRT-LLM): the framework's module structure, named by its module, never the program's block."""
    return pytorch.module_hook_name(text) is not None


def is_framework_range(name: str) -> bool:
    """A range a framework's library writes around its own code by its own naming rule (``pytorch.is_framework_range``:
    Megatron-core's ``<module>.<function>.<suffix>`` once a layer, Lightning's ``[pl][...]``): the framework's structure,
    never the user's named region -- what ran, not where the user's code is."""
    return pytorch.is_framework_range(name)


#: NVTX domains a framework writes its own ranges in (``pytorch.FRAMEWORK_RANGE_DOMAINS``: DeepSpeed's): every range
#: there is the framework's structure, as :func:`is_framework_range`'s are by their names.
FRAMEWORK_RANGE_DOMAINS = frozenset(pytorch.FRAMEWORK_RANGE_DOMAINS)


def is_framework_step_end(name: str) -> bool:
    """A framework's own range closing each training iteration (``pytorch.is_framework_step_end``: DeepSpeed's ZeRO
    optimizer's ``step``)."""
    return pytorch.is_framework_step_end(name)


def is_framework_micro_batch(name: str) -> bool:
    """A framework's own range once a micro-batch (``pytorch.is_framework_micro_batch``: DeepSpeed's engine
    ``forward``)."""
    return pytorch.is_framework_micro_batch(name)


def framework_range_writer(name: str, domain: str = "") -> str:
    """The library that wrote a framework range, by its name or its NVTX domain (``pytorch.framework_range_writer``:
    ``DeepSpeed``); "" for a range none of them wrote -- the user's."""
    return pytorch.framework_range_writer(name, domain)


def is_user_scope(name: str) -> bool:
    """A suffixed autograd NVTX range's name (suffix cut off) that is the user's ``record_function`` (no ``seq``: no
    op autograd numbered): neither a framework op nor a scope PyTorch opens itself."""
    return not is_framework_scope(name)


def is_op_name(name: str) -> bool:
    """A range name (its suffix cut off) a framework gives its own ops and executions: PyTorch's autograd NVTX even
    without a suffix, XLA's module and thunk ranges (``xla.is_nvtx_range``)."""
    return name.startswith(_OP_PREFIX) or xla.is_nvtx_range(name)


def is_library_range(name: str, domain: str = "") -> bool:
    """A range a library opens around its own work (NCCL, collective wrappers, cuDNN...): never a step."""
    return domain in LIBRARY_DOMAINS or name.startswith(_LIBRARY_PREFIX)


def is_communication_domain(domain: str) -> bool:
    """A library domain whose ranges are communication with other processes (:data:`COMMUNICATION_DOMAINS`)."""
    return domain in COMMUNICATION_DOMAINS


#: Ranges a library opens around its own communication call in the default domain, by their name's start: NCCL's
#: API (``ncclAllReduce``, ``ncclCommInitRank``, ``ncclGroupStart``: its own ``NCCL`` domain since NCCL 2.9, a range
#: of its name where older builds or a wrapper pushed it without one).
_COMMUNICATION_PREFIX = ("nccl", "NCCL", "rccl")


def is_communication_range(name: str, domain: str = "") -> bool:
    """A range of communication with the job's other processes: in a communication library's domain
    (:data:`COMMUNICATION_DOMAINS`), NCCL's calls by their name, or a framework's collective op (PyTorch's
    ``nccl:all_reduce``, ``c10d::allreduce_``, ``record_param_comms``: ``pytorch.is_collective_op``).  A process
    that opens one is a rank of a job: a launcher or a loader worker communicates with no rank."""
    return is_communication_domain(domain) or name.startswith(_COMMUNICATION_PREFIX) or pytorch.is_collective_op(name)


#: A module path's layer index: a number standing alone between a module's name and the next part of its path
#: (``blocks.16._checkpoint_wrapped_module``, ``model.layers.3.mlp``, ``decoder.layers.5``, ``transformer.h.11``,
#: ``encoder.layer.3``), or a container's index as code writes it (``model.layers[3]``, ``self.blocks[7].attn``: a
#: hook that names its range by the expression that reached the module, as ``torch.compile``'s guards and JAX/Equinox
#: paths do): a model's structure, which a framework writes into the ranges it opens per layer (FSDP's
#: ``FSDP::pre_forward (blocks.16....)``, Megatron-core's ``...layers.5...``, the layer-wise forward hooks'
#: ``model.layers.0``) -- never a loop's counter (``train_step 3``).
_LAYER_INDEX = re.compile(r"(?<=[A-Za-z_]\.)\d+(?=\.|\)|\s|$)|(?<=[A-Za-z_]\[)\d+(?=\])")


#: A layer's index after the word that names it, as a program writes its own per-layer ranges (``layer_0_forward``,
#: ``ensure_layer_3``, ``layer 12``): the model's structure again, not a loop's counter.  Not "block": a blocked
#: solver's ``block 17`` counts its loop.
_LAYER_WORD_INDEX = re.compile(r"(?<![A-Za-z])[Ll]ayers?[_ ]?(\d+)(?![0-9])")


def layer_family(name: str) -> str | None:
    """A range's name with its layer indices written ``#`` -- a module path's (``FSDP::pre_forward
    (blocks.#._checkpoint_wrapped_module)``, :data:`_LAYER_INDEX`) or a layer word's (``layer_#_forward``,
    :data:`_LAYER_WORD_INDEX`): the one name of the ranges a framework or a program opens around each layer alike;
    None where the name holds no layer index."""
    spans = sorted({m.span() for m in _LAYER_INDEX.finditer(name)} | {m.span(1) for m in _LAYER_WORD_INDEX.finditer(name)})
    if not spans:
        return None
    cut = [0, *(x for span in spans for x in span), len(name)]
    return "#".join(name[cut[k]:cut[k + 1]] for k in range(0, len(cut), 2))  # each index a '#': a name, not words


#: A number anywhere in a range's name: a step's (``step_12``), a rank's (``rank0/forward``), a pid's, a layer's.
_ANY_NUMBER = re.compile(r"\d+")


def number_family(name: str) -> str:
    """A range's name with every number written ``#`` (``rank#/forward``, ``train_step #``): the one name of ranges
    that differ only by an index -- a step's, a rank's, a process's.  Why: the ranks of one job run one program, but a
    program that writes its rank or its step number into its ranges gives each rank names of its own; compared whole,
    no rank's names were another's (h37-nvtx62 *Left* 3)."""
    return _ANY_NUMBER.sub("#", name)  # each number a '#': a name's numbers masked, no word touched


#: A name of two labelled counters and nothing else: a word, its number, another word, its number (``cycle 2 pass 5``,
#: ``phase1_chunk3``, ``round 2 turn 7``, ``Cycle 2, Pass 5``) -- the form only; which loops the words name is not read
#: here: the ranges' order tells (``steps.nvtx_ranges._counted_loop_names``: the outer counter constant across each run
#: of the inner one, every pair once, the ranges repeated and apart).
_TWO_COUNTERS = re.compile(r"^([A-Za-z]+(?:[-_ ][A-Za-z]+)*)[-_ #:=]*(\d+)[-_ ,./|:;]*"
                           r"([A-Za-z]+(?:[-_ ][A-Za-z]+)*)[-_ #:=]*(\d+)[^A-Za-z0-9]*$")


def two_counters(name: str) -> tuple[str, int, str, int] | None:
    """(outer word, its number, inner word, its number) of a range named by two labelled counters alone
    (:data:`_TWO_COUNTERS`), after its rank label and logged values; None for any other name, and for a layer's
    (``layer 3 block 2``: :func:`layer_family`) -- an index into a model, no loop's turn."""
    name = without_logged_values(without_rank(name.strip()))
    m = _TWO_COUNTERS.match(name)
    if m is None or layer_family(name) is not None:
        return None
    return m.group(1).lower(), int(m.group(2)), m.group(3).lower(), int(m.group(4))


#: A scope path before a range's last part that carries a number: ``jax/`` of ``jax/iteration_0``, ``train/`` of
#: ``train/step_12`` -- the loop's own prefix, one word per level, as ``f"{name}/iteration_{i}"`` writes it.
_SCOPE_PATH = re.compile(r"^(?:[A-Za-z][A-Za-z0-9_.-]*/)+(?=[^/]*\d[^/]*$)")


#: A micro-step's range named after the iteration it belongs to: an iteration's word and counter, then a micro-step's
#: word and index -- ``iteration_3_ga_step_0`` (NVIDIA-NeMo/Automodel ``examples/benchmarking/next_token_prediction.py``:
#: ``torch.cuda.nvtx.range_push(f"iteration_{i}_ga_step_{_ga_step_idx}")`` around each gradient-accumulation step,
#: the optimizer's step after the last, outside them), ``step 3 micro 1``, ``iter3_microbatch0``, ``train_step_3/mb_2``.
#: The first number counts the iterations, the second the micro-steps inside one.
_ITERATION_OF_MICRO_STEP = re.compile(
    r"^(?:train(?:ing)?[-_ .]?)?(?:step|iter(?:ation)?)[-_ #:=]*(\d+)[-_ ,./|:]*"
    r"(?:ga[-_ ]?step|grad(?:ient)?[-_ ]?accum(?:ulation)?(?:[-_ ]?step)?|accum(?:ulation)?(?:[-_ ]?step)?|"
    r"micro(?:[-_ ]?(?:batch|step))?|mb|ubatch)[-_ #:=]*\d+$", re.I)


def iteration_number(name: str) -> int:
    """The iteration a micro-step's range names (:data:`_ITERATION_OF_MICRO_STEP`: ``iteration_3_ga_step_0`` -> 3);
    -1 for any other name.

    Why: a loop under gradient accumulation that numbers each micro-step's range by its iteration says which ranges
    make one optimizer step; read by their order (their last number, the micro-step's index, repeats every iteration),
    each micro-step was a step of its own -- 32 "steps" of 3.5 ms for 8 iterations of 14 ms whenever the optimizer's
    update was not named beside them (h37-nvtx69)."""
    m = _ITERATION_OF_MICRO_STEP.match(name.strip())
    return int(m.group(1)) if m is not None else -1


#: The process a range's name starts by naming, as a multi-process job labels its ranges for a timeline of several
#: ranks: ``rank0/``, ``rank3:``, ``rank 1 ``, ``[rank2] ``, ``gpu1_`` (``torch.cuda.nvtx.range_push(f"rank{rank}/
#: tp_reduce_scatter")``, ``f"rank{rank}:all_gather"`` in public benchmarks, h37-nvtx69) -- whose, not what.
_RANK_PREFIX = re.compile(r"^\[?(?:rank|gpu|local[-_ ]?rank)[-_ #:=]?\d+\]?(?:\s*[-_:/|]\s*|\s+)(?=[A-Za-z])", re.I)


def without_rank(name: str) -> str:
    """``name`` without the rank label it starts with (:data:`_RANK_PREFIX`: ``rank1 step 3`` -> ``step 3``): the
    ranks of one job run one loop, and each labels the same range with its own rank."""
    m = _RANK_PREFIX.match(name)
    return name[m.end():] if m is not None else name


#: A loop's counter in a name of several: the words since the previous counter, then the number, its total perhaps
#: (``Epoch 1/10``) -- ``iteration epoch=``, ``, rollout step ``, ``][iter ``, ``_b``.
_LABELLED_COUNTER = re.compile(r"([^\d]*?)(\d+)(?:\s*/\s*\d+)?")
#: The words a counter's label may end with, by the loop they count: the inner loop's turn (the step) or an outer
#: loop's (``epoch``, ``rollout``, ``round``, ``episode``; ``e`` / ``b`` as ``f"e{e}_b{b}"`` abbreviates them).
_INNER_LOOP_WORDS = frozenset({"step", "steps", "iter", "iteration", "it", "batch", "b", "s", "i"})
_OUTER_LOOP_WORDS = frozenset({"epoch", "ep", "e", "rollout", "outer", "round", "episode"})
#: Words a counter's label may hold before its loop word: what loop (``inference step``, ``rollout step``,
#: ``global step``), or the range's own title (``iteration epoch=1 batch=2``).
_LOOP_QUALIFIERS = frozenset({"train", "training", "inference", "infer", "iteration", "global", "inner"}
                             | _OUTER_LOOP_WORDS)
#: A logged value after the counters, as a loop that writes its loss into the range's name: `` loss=2.31``,
#: ``, lr: 3e-4`` -- a key and a number with a point or an exponent (a counter has neither).
_LOGGED_VALUES = re.compile(r"(?:[\s,;|]+[A-Za-z_]+\s*[=:]\s*-?(?:\d*\.\d+|\d+\.\d*|\d+(?:\.\d*)?e-?\d+)(?:e-?\d+)?)+$",
                            re.I)
_LABEL_WORDS = re.compile(r"[a-z]+")


def without_logged_values(name: str) -> str:
    """``name`` without the values a loop logs after its counters (:data:`_LOGGED_VALUES`: ``step=12 loss=2.31`` ->
    ``step=12``): they change every turn, so the turns of one loop would each have a name of their own."""
    m = _LOGGED_VALUES.search(name)  # the values end the name: what stands before them is kept as written
    return name[:m.start()] if m is not None else name


def _counter_loops(name: str) -> list[str] | None:
    """Per counter of ``name``, the loop it counts -- ``"outer"`` or ``"inner"`` -- where the name is nothing but
    loop counters (``epoch 2 batch 30``: outer, inner); None where any counter is no loop's (``layer 3 block 2``,
    ``epoch 2 microbatch 1``) or letters follow the last one."""
    text = without_logged_values(name)
    loops, end = [], 0
    for m in _LABELLED_COUNTER.finditer(text):
        if m.end() == m.start():
            break
        words = _LABEL_WORDS.findall(m.group(1).lower())
        if not words or words[-1] not in _INNER_LOOP_WORDS | _OUTER_LOOP_WORDS or \
                not set(words[:-1]) <= _LOOP_QUALIFIERS:
            return None
        outer = words[-1] in _OUTER_LOOP_WORDS or any(w in _OUTER_LOOP_WORDS for w in words[:-1])
        loops.append("outer" if outer else "inner")
        end = m.end()
    return loops if not re.search(r"[A-Za-z]", text[end:]) else None


def is_nested_loop_name(name: str) -> bool:
    """A range named by the counters of nested loops, an outer loop's and the step's: ``iteration epoch=1 batch=2``,
    ``inference step 3, rollout step 2``, ``Epoch 1/10 Step 5/100``, ``[epoch 2][iter 30]``, ``e3_b17`` (public
    trainers' ``_nvtx_range_push(f"iteration epoch={e} batch={b}")``, SURVEY h37-nvtx69 *Left* 1-2).  Each such range is
    one turn of the inner loop -- one step -- however the outer counter moves; every counter must be a loop's, an
    outer one and an inner one, so that ``layer 3 block 2``, ``epoch 2 microbatch 1`` (a micro-step, see
    :func:`iteration_number`) or a single ``microbatch 2`` stay no step.

    Why: read whole, the outer word (``epoch=``) after the step's kept the name from being a step's, and the steps came
    from the most repeated range (medium) or the launches' period (low), the findings' severity with them."""
    loops = _counter_loops(name)
    return loops is not None and "inner" in loops and "outer" in loops


def is_step_name(name: str) -> bool:
    """A user range named like a training step or iteration (see :data:`_STEP_NAME`), an inference loop's turn
    (:data:`_INFERENCE_STEP_NAME`: ``inference_step_3``) or a micro-step named after its iteration
    (:func:`iteration_number`: ``iteration_3_ga_step_0``), after the rank label it may start with
    (:func:`without_rank`: ``rank1 step 3``), also under a scope path (:data:`_SCOPE_PATH`) where its last part is a
    numbered one (``jax/iteration_0``).

    Why: a benchmark that times several variants names each turn of its loop after the variant
    (lutetjeff/cs521-mp2's ``record_function(f"{name}/iteration_{i}")`` around each call of a jitted JAX conv): read
    whole, no such range was a step, and the steps came from the GPU's period instead -- "no step markers or step
    spans in the capture" beside the three ranges the program opened around its three turns (h37-huntjax64)."""
    name = without_rank(name.strip())
    if _NOT_STEP.search(name):
        return False
    if _STEP_NAME.match(name) or _INFERENCE_STEP_NAME.match(name) or iteration_number(name) >= 0 or \
            is_nested_loop_name(name):
        return True
    scope = _SCOPE_PATH.match(name)
    return scope is not None and bool(_STEP_NAME.match(name[scope.end():]))


#: A step range named after training, the whole name: ``train_step``, ``training_step`` (Lightning's hook),
#: ``train_iter_3``, ``train/step_12``, ``TrainStep``, ``train_batch``, ``train_epoch``, Keras' ``train_function``,
#: the ``train`` a TF / JAX ``StepTraceAnnotation`` marks its steps with, ``train 3``, and the program's words before it
#: (``ddp_train_step``, ``jit_train_step``) -- the step range our own capture advice asks a training job to write
#: (:data:`STEP_RANGES`, ``jax.STEP_MARKS``).  Never a word that only starts with it (``trainer``, ``train_loader``,
#: ``train_data``: the loader, not the step).
_TRAINING_STEP_NAME = re.compile(r"^(?:[A-Za-z0-9]+[-_ .])*train(?:ing)?"
                                 r"(?:[-_ ./]?(?:step|iter(?:ation)?|batch|epoch|loop|function))?" + _COUNTER + "$",
                                 re.I)


def is_training_step_name(name: str) -> bool:
    """A step range whose name says training (:data:`_TRAINING_STEP_NAME`), after its rank label
    (:func:`without_rank`), never a warm-up's or an optimizer's (``_NOT_STEP``).  The name says what the program meant
    the step to be, not what ran in it: the job stage weighs it below a backward pass seen (``job.kind``).

    Why: ``train_step`` alone, with no backward or optimizer range, left the job's kind "unknown" on NVIDIA and AMD
    alike (h37-amd69 *Left* 3), though it is the name our capture advice asks training jobs to use."""
    name = without_rank(name.strip())
    return not _NOT_STEP.search(name) and bool(_TRAINING_STEP_NAME.match(name))


#: A user range that marks the program's own warm-up: ``Warm-up``, ``warmup``, ``Warm-up Step 3``, ``warm_up phase``
#: -- the iterations a benchmark runs before the ones it measures.
_WARMUP_NAME = re.compile(r"(?:^|[^a-z])warm[-_ ]?up(?:$|[^a-z])", re.I)


def is_warmup_name(name: str) -> bool:
    """A user range the program names as its warm-up (:data:`_WARMUP_NAME`)."""
    return bool(_WARMUP_NAME.search(name.strip()))


#: A user range named after a phase of one pass through a model: its forward pass, its backward pass or the
#: optimizer's step (``forward``, ``forward pass``, ``Backward``, ``fwd``, ``optimizer step``, ``opt_step``) -- the
#: parts a benchmark times, as opposed to its set-up (process group, model, parameters' broadcast) and warm-up.
_PASS_PHASE = re.compile(r"(?:^|[^a-z])(?:forward|fwd|backward|bwd)(?:$|[^a-z])|optimi[sz]er|(?:^|[^a-z])opt[-_. ]?step",
                         re.I)


def is_pass_phase_name(name: str) -> bool:
    """A user range named after a forward pass, a backward pass or an optimizer step (:data:`_PASS_PHASE`), never a
    warm-up (``warm-up forward``): the program's own bounds of the pass it measures."""
    name = name.strip()
    return bool(_PASS_PHASE.search(name)) and not is_warmup_name(name)


#: A range named after a model's forward pass alone: ``forward``, ``fwd``, ``forward_step`` (Megatron's pipeline
#: schedule), ``model forward``, ``Forward pass`` -- the word whole (``forwarder`` is none), and none of a backward's
#: or an optimizer's words beside it (``fwd_bwd``, ``forward_backward`` are a whole training step).
_FORWARD_RANGE = re.compile(r"(?<![a-z])(?:forward|fwd)(?![a-z])", re.I)


def is_forward_range(name: str) -> bool:
    """A range name that says the forward pass and nothing else (:data:`_FORWARD_RANGE`): no training word
    (:func:`is_training_range`), no warm-up, no library's own hook (``FSDP::pre_forward``: the wrapper's, not a
    block of the program's).  The name says where the forward is, not that nothing else ran: the job stage asks
    the launches outside such ranges for that (``job.kind._marked_forwards``)."""
    name = name.strip()
    return (bool(_FORWARD_RANGE.search(name)) and not is_training_range(name) and not is_warmup_name(name)
            and not is_library_range(name))


#: A range named after decoding, the word whole: ``decode 3``, ``decode``, ``Decoding`` -- a model's decode step (one
#: forward pass per token) or a codec's decoding of data (an image, a frame), which the name cannot tell apart; never
#: a ``decoder`` (a model's module, run in training too).
_DECODE_RANGE = re.compile(r"(?<![a-z])decod(?:e|ing)(?![a-z])", re.I)


def is_decode_range(name: str) -> bool:
    """A range name that says decoding (:data:`_DECODE_RANGE`) and nothing of training's.  Which decoding is the job
    stage's to read from what runs inside it (``job.kind._marked_forwards``: a model's matrix products)."""
    name = name.strip()
    return bool(_DECODE_RANGE.search(name)) and not is_training_range(name) and not is_library_range(name)


#: A range the user (or a data-parallel wrapper) names after work only training does: the backward pass, the
#: optimizer's step, the gradients' all-reduce or sync, DDP / FSDP set-up and the parameters' broadcast that starts
#: a data-parallel job (``loss.backward``, ``optimizer_step``, ``allreduce_grads``, ``DDP broadcast params``, the
#: gradients' reset as tutorials name it: ``zero_grad``, ``zero grad``), in the
#: short forms programs write too: ``bwd`` / ``BWD`` beside ``fwd`` (``torch.cuda.nvtx.range_push("BWD");
#: y.backward(dy)``), ``optim_step``, gradient clipping (``clip_grad_norm``: only gradients are clipped).
_TRAINING_RANGE = re.compile(
    r"backward|back[-_ ]?prop|(?<![a-z])bwd(?![a-z])|optimi[sz]er|\bopt(?:im)?[-_.]?step|zero[-_ ]?grad|"
    r"clip[-_ ]?grad|grad(?:ient)?s?[-_ ]*(?:norm[-_ ]*)?clip|"
    r"grad(?:ient)?s?[-_ ]*(?:all[-_ ]?reduce|reduce|sync|bucket)|(?:all[-_ ]?reduce|reduce[-_ ]?scatter)[-_ ]*grad|"
    r"\bDDP\b|\bFSDP\b|DistributedDataParallel|FullyShardedDataParallel|"
    r"broadcast[-_ ]*(?:param|model|weight|buffer)|(?:param(?:eter)?s?|model|weight)[-_ ]*broadcast|sync[-_ ]?params",
    re.I)
#: A range named after serving or evaluating a model, never training it (``inference``, ``generate``, ``prefill``,
#: a decode loop's unit: ``decode_step_{i}``, ``decode_token_{index}``, ``DECODE_ITER_{n}``, ``Decode/step_003`` --
#: public benchmarks' names, h37-probe43n; ``decode`` alone is also data decoding: :func:`is_decode_range`).
#: Words end at any non-letter: ``_`` and digits separate them too, as in the snake_case names Python code gives its
#: ranges (``resnet50_inference``, ``llama_prefill``), where a regex's ``\b`` sees no boundary.
#: Serving words too (h37-kind69 *Left* 2): ``serve``, ``serving_step``, ``serve_request``, ``handle_request``,
#: ``process_request``, a numbered ``request {n}`` / ``request_7`` (one request served per turn of the loop) -- the
#: words whole (``server``, ``service``, ``observe``, ``reserve`` say none), and ``request`` only with the serving verb
#: before it or its counter after it (an MPI program's ``MPI_Request`` / ``wait_request`` is no request served).
_INFERENCE_RANGE = re.compile(r"(?<![a-z])(?:inference|infer|generat(?:e|ion)|prefill)(?![a-z])|(?<![a-z])predict|"
                              r"(?<![a-z])decod(?:e|ing)[-_ ./]*(?:step|iter(?:ation)?|token)|"
                              r"(?<![a-z])serv(?:e|ing)(?![a-z])|"
                              r"(?<![a-z])(?:handle|process|serve)[-_ ]?requests?(?![a-z])|"
                              r"^requests?[-_ #:]?\d+$", re.I)
#: A range named after making the program's own data (``data generation``, ``mock generate data``, ``generate random
#: inputs``): set-up or a workload's input, not a model generating its output (quasiben/nvtx-examples' CuPy and
#: multiprocessing scripts), so "generate" there names no inference.
_DATA_GENERATION = re.compile(
    r"(?<![a-z])(?:data(?:set)?|inputs?|mock|synthetic|random|fake|dummy|tensors?|arrays?)[-_ ]*"
    r"generat|generat(?:e|ion|ing)[-_ ]+(?:(?:of|the|some|mock|random|synthetic|fake|dummy)[-_ ]+)*"
    r"(?:data(?:set)?|inputs?|tensors?|arrays?)(?![a-z])", re.I)


#: TensorRT's own range around running a built engine (``IExecutionContext::executeV2`` / ``enqueueV3``, in its
#: ``TensorRT`` NVTX domain, with one range per layer inside): TensorRT only runs inference, so the range says what the
#: job is, though no user named it.
_INFERENCE_RUNTIME_RANGE = re.compile(r"^ExecutionContext::(?:execute|enqueue)")


def is_inference_runtime_range(name: str) -> bool:
    """A range an inference-only runtime opens around running its model (TensorRT's execution context)."""
    return bool(_INFERENCE_RUNTIME_RANGE.match(name))


#: A range named after a numerical method's backward direction, not a model's backward pass: an inverse transform
#: (``fft_bwd``, ``backward FFT``, ``bwd_dft``), a triangular solve's backward substitution, a sweep or an
#: integrator's step (``backward Euler``) -- HPC codes name these ``fwd`` / ``bwd`` as models do their passes.  The
#: veto is of the whole name, not of its direction word alone: a range that names a numerical method and an optimizer
#: at once (none seen) says no training by its name, and the job's kind then rests on its other evidence -- the safe
#: side, since training advice to a solver is the error this guards against.
_NUMERICAL_DIRECTION = re.compile(r"fft|dft|transform(?!er)|subst|sweep|euler|integrat|(?<![a-z])solve", re.I)


#: A range named after evaluating a model on held-out data, the whole name a phase of a loop: ``eval_step``,
#: ``evaluate``, ``evaluation``, ``validation_step``, ``validate``, ``val_step``, ``test_step``, ``eval 3`` -- forward
#: passes where nothing else trains (Lightning runs its validation inside ``fit``, between training steps: a window
#: with training's names too is training).  The whole name, not a word in it: a method's ``ExpressionEvaluator::
#: evaluate`` / ``PrecomputedValues::Validate`` (nvFuser's C++ expression evaluator, wild/nvfuser_h200_gtest)
#: evaluates an expression, not a model; ``val`` and ``test`` only with the phase they name (``val_step``).
_PHASE = r"(?:[-_ .]?(?:step|loop|batch|epoch|phase|pass|iter(?:ation)?))"
_EVALUATION_RANGE = re.compile(r"^(?:(?:eval(?:uat(?:e|ion|ing))?|validat(?:e|ion|ing))%s?|(?:val|test)%s)%s$"
                               % (_PHASE, _PHASE, _COUNTER), re.I)


def is_evaluation_range(name: str) -> bool:
    """A range name that says evaluation (:data:`_EVALUATION_RANGE`) and nothing of training's."""
    return bool(_EVALUATION_RANGE.search(name)) and not is_training_range(name)


#: A range or call named after the optimizer's update of the weights -- once an optimizer step: the user's own
#: (``optimizer_step``, ``optimizer``, ``opt.step``, ``adamw_update``) or PyTorch's (``Optimizer.step#AdamW.step``);
#: never the gradients' reset (``optimizer.zero_grad``), which runs at every step's start whatever the accumulation.
_UPDATE_RANGE = re.compile(r"optimi[sz]er|(?<![a-z])opt(?:im)?[-_.]?step|(?<![a-z])(?:adam|sgd|lamb)w?[-_ .]?(?:step|update)",
                           re.IGNORECASE)


def is_update_range(name: str) -> bool:
    """A range name that says the optimizer's update (:data:`_UPDATE_RANGE`), not its gradients' reset: under gradient
    accumulation it closes each optimizer step, once every k micro-steps (``steps.iterations``)."""
    return bool(_UPDATE_RANGE.search(name)) and not re.search(r"zero[-_ ]?grad", name, re.IGNORECASE)


#: A range or op named after a backward pass: the user's (``backward``, ``bwd``, ``backprop``) or autograd's
#: (``MmBackward0``, ``autograd::engine::evaluate_function: ...Backward0``).
_BACKWARD_RANGE = re.compile(r"backward|back[-_ ]?prop|(?<![a-z])bwd(?![a-z])", re.IGNORECASE)


def is_backward_range(name: str) -> bool:
    """A range or op name that says a backward pass (:data:`_BACKWARD_RANGE`), never a numerical method's backward
    direction (:data:`_NUMERICAL_DIRECTION`): with an update inside one range, the range holds a training step's
    work (``steps.ranges._holds_training_steps``)."""
    return bool(_BACKWARD_RANGE.search(name)) and not _NUMERICAL_DIRECTION.search(name)


def is_training_range(name: str) -> bool:
    """A range name that says training: a backward pass, an optimizer step, a gradient all-reduce, DDP/FSDP set-up
    -- never a numerical method's backward direction (:data:`_NUMERICAL_DIRECTION`), nor FSDP's own hooks around a
    forward (``pytorch.is_sharded_forward_hook``: FSDP also shards models run forward only; its name's "FSDP" read
    one FSDP forward as "training [high]", h37-nvtx63)."""
    return ((bool(_TRAINING_RANGE.search(name)) and not _NUMERICAL_DIRECTION.search(name)
             and not pytorch.is_sharded_forward_hook(name)) or pytorch.is_rl_training_range(name))


def is_inference_range(name: str) -> bool:
    """A range name that says inference (and nothing of training's)."""
    return bool(_INFERENCE_RANGE.search(name)) and not is_training_range(name) and not _DATA_GENERATION.search(name)


#: The libraries whose own ranges (``pytorch.framework_range_writer``) are PyTorch's ecosystem alone: their writer
#: runs in a PyTorch program -- Lightning's loop, DeepSpeed's engine, Megatron-core's and NeMo's modules, PyTorch's own
#: data-parallel wrappers and compiled graphs.  Transformer Engine is left out: it ships a JAX binding too.
_PYTORCH_LIBRARIES = frozenset({"Lightning", "DeepSpeed", "Megatron-core", "Megatron-LM's RL trainer", "NeMo", "FSDP", "DDP",
                                "torch.compile"})


def _pytorch_library_ranges(host_names: list[str], domains: list[str]) -> bool:
    """A range or NVTX domain only a library of PyTorch's ecosystem writes (:data:`_PYTORCH_LIBRARIES`): the program
    is PyTorch's even where no ATen op was recorded as a range (Lightning's ``PyTorchProfiler(emit_nvtx=True)`` wraps
    only its own actions, ``[pl][profile]run_training_batch``, where nsys ran without ``--pytorch=autograd-nvtx``)."""
    if any(pytorch.FRAMEWORK_RANGE_DOMAINS.get(d) in _PYTORCH_LIBRARIES for d in domains):
        return True
    return any(pytorch.framework_range_writer(n) in _PYTORCH_LIBRARIES for n in host_names[:_MAX_SHOWN])


#: How many distinct host names :func:`framework_shown` reads a library's ranges among.
_MAX_SHOWN = 20000


def framework_shown(host_names: list[str], kernel_names: list[str], domains: list[str] = (),
                    module_hooks: bool = False) -> str | None:
    """The framework a tracer's range and kernel names show (Nsight exports, rocmProfileData databases): PyTorch where
    ATen ops are ranges (autograd NVTX, roctx) or ATen's own kernels run, or where its modules' forward hooks wrote
    their markers (``module_hooks``: :func:`is_module_hook`, told by the reader from the ranges' text -- the hooks are
    ``torch.nn.Module`` forward hooks, so the job they mark is PyTorch's whatever its kernels are named); JAX where XLA's
    module ranges execute modules JAX named (``XlaModule:#hlo_module=jit_train_step,...#``); TensorFlow where its op
    ranges' NVTX domain is there (``TF_ENABLE_NVTX_RANGES``) or its own kernels ran (``tensorflow::``: an export of a
    TensorFlow 1.15 program traced without NVTX, shaped in ``synthetic.nsysexport.write_eager_training_bursts``, read
    as a program with no framework, had TF's dispatch between launches booked as the program's own code once
    h37-ownsplit told the two apart)."""
    if (module_hooks or any(n.startswith("aten::") for n in host_names) or any("at::native::" in n for n in kernel_names)
            or _pytorch_library_ranges(host_names, domains)):
        return "pytorch"
    if tensorflow.NVTX_OP_DOMAIN in domains or any(tensorflow.KERNEL_NAMESPACE in n for n in kernel_names):
        return "tensorflow"
    if any(jax.is_module_name(xla.nvtx_module(n)) for n in host_names):
        return "jax"
    return None
