"""NVTX range names: which are a framework's op, which a library's own call, which mark a training step.

NVTX ranges are how code marks itself under Nsight Systems (``torch.cuda.nvtx.range_push("forward")``,
``nvtx.annotate``).  Three kinds reach a capture, told apart by their names:

* **ops**: PyTorch's ``--pytorch=autograd-nvtx`` (``torch.autograd.profiler.emit_nvtx``) wraps every ATen op
  and ``record_function`` in a range named ``aten::mm, seq = 12, op_id = 34[, sizes = [...], input_op_ids =
  [...]]``; FSDP's hooks (``FSDP::pre_forward (encoder.block.3)``) come with the same suffix.  They are ops,
  read like the ``cpu_op`` events of a PyTorch trace: their name is the part before the first suffix.
* **library ranges**: NCCL's own domain (``ncclAllReduce``, ``ncclGroupStart``), PyTorch's collective wrappers
  (``record_param_comms``, ``c10d::allreduce_``, ``nccl:all_reduce``), cuDNN/cuBLAS and Transformer Engine
  internals: never a step, never the user's block.
* **user ranges**: everything else -- the blocks of the user's own code (``forward``, ``data``, ``train_step``,
  Megatron's ``forward-backward``, NeMo's ``train_step`` ...).  A user range named like a step or an iteration
  marks steps (:func:`is_step_name`); without one, the most repeated top-level user range does
  (``steps.detect``).
"""

from __future__ import annotations

import re

#: The suffixes PyTorch's autograd NVTX ranges carry after the op's name (``torch/csrc/profiler``: ``seq``,
#: ``op_id``, ``sizes``, ``input_op_ids``; ``stashed seq`` on backward ops).  A reader may cut them off itself
#: (the Nsight reader does it in SQL): the name is the text before the first of them.
OP_SUFFIXES = (", seq = ", ", op_id = ", ", sizes = ", ", input_op_ids = ", ", stashed seq = ")
_OP_SUFFIX = re.compile("|".join(re.escape(x) for x in OP_SUFFIXES))
#: Names PyTorch's autograd NVTX gives ops even without a suffix.
_OP_PREFIX = ("aten::", "autograd::", "torch::autograd::", "prims::", "c10d::", "profiler::", "cudnn::")

#: Ranges a library opens around its own calls: NCCL's NVTX domain (``ncclAllReduce``, ``ncclGroupEnd``...),
#: PyTorch's collective wrappers, FSDP/DDP hooks, the optimizer's and autograd's wrappers, cuDNN, cuBLAS and
#: Transformer Engine (``TE::``) internals.
_LIBRARY_PREFIX = ("nccl", "NCCL", "c10d::", "record_param_comms", "FSDP::", "DDP::", "Optimizer.", "autograd::",
                   "torch::autograd::", "cudnn", "cuDNN", "cublas", "cuBLAS", "TE::", "transformer_engine",
                   "CUDA_GRAPH", "cudaGraph")
#: NVTX domains of libraries, by name (``nvtxDomainCreate``): ranges in them are never the user's blocks.
LIBRARY_DOMAINS = frozenset({"NCCL", "nccl", "cuDNN", "cuBLAS", "cuBLASLt", "CUDA", "NVSHMEM", "TransformerEngine",
                             "cuFFT", "cuSPARSE", "UCX", "MPI", "NVIDIA NCCL"})

#: A user range that marks a step: ``step``, ``train_step``, ``training_step 12``, ``iteration 3``, ``iter_7``,
#: ``Step#4``, ``batch 12`` -- but no optimizer or scheduler step (``optimizer.step``, ``lr_scheduler.step``), which
#: runs inside a training step.
_STEP_NAME = re.compile(r"^(?:(?:train(?:ing)?|fwd_?bwd|forward[-_ ]backward)[-_ .]?)?(?:step|iter(?:ation)?|batch)"
                        r"(?:[-_ #:=]*\d+)?$|^(?:train(?:ing)?[-_ .]?)?(?:step|iter(?:ation)?)[-_ #:=]*\d+\b", re.I)
_NOT_STEP = re.compile(r"optim|schedul|lr[-_]|zero_grad|scaler|sampler|warmup", re.I)


def op_name(text: str) -> tuple[str, bool]:
    """(the range's name, whether it is a framework op): ``aten::mm, seq = 1, op_id = 2`` -> (``aten::mm``, True);
    ``forward`` -> (``forward``, False)."""
    m = _OP_SUFFIX.search(text)
    if m is not None:
        return text[: m.start()], True
    return text, text.startswith(_OP_PREFIX)


def is_op_name(name: str) -> bool:
    """A range name (its suffix cut off) that PyTorch's autograd NVTX gives ops even without a suffix."""
    return name.startswith(_OP_PREFIX)


def is_library_range(name: str, domain: str = "") -> bool:
    """A range a library opens around its own work (NCCL, collective wrappers, cuDNN...): never a step."""
    return domain in LIBRARY_DOMAINS or name.startswith(_LIBRARY_PREFIX)


def is_step_name(name: str) -> bool:
    """A user range named like a training step or iteration (see :data:`_STEP_NAME`)."""
    name = name.strip()
    return bool(_STEP_NAME.match(name)) and not _NOT_STEP.search(name)


#: A range the user (or a data-parallel wrapper) names after work only training does: the backward pass, the
#: optimizer's step, the gradients' all-reduce or sync, DDP / FSDP set-up and the parameters' broadcast that starts
#: a data-parallel job (``loss.backward``, ``optimizer_step``, ``allreduce_grads``, ``DDP broadcast params``).
_TRAINING_RANGE = re.compile(
    r"backward|back[-_ ]?prop|optimi[sz]er|\bopt[-_.]?step|zero[-_]?grad|"
    r"grad(?:ient)?s?[-_ ]*(?:all[-_ ]?reduce|reduce|sync|bucket)|(?:all[-_ ]?reduce|reduce[-_ ]?scatter)[-_ ]*grad|"
    r"\bDDP\b|\bFSDP\b|DistributedDataParallel|FullyShardedDataParallel|"
    r"broadcast[-_ ]*(?:param|model|weight|buffer)|(?:param(?:eter)?s?|model|weight)[-_ ]*broadcast|sync[-_ ]?params",
    re.I)
#: A range named after serving or evaluating a model, never training it (``inference``, ``generate``, ``prefill``).
_INFERENCE_RANGE = re.compile(r"\binference\b|\binfer\b|\bgenerat(?:e|ion)\b|\bpredict|\bprefill\b|\bdecode[-_ ]?step",
                              re.I)


def is_training_range(name: str) -> bool:
    """A range name that says training: a backward pass, an optimizer step, a gradient all-reduce, DDP/FSDP set-up."""
    return bool(_TRAINING_RANGE.search(name))


def is_inference_range(name: str) -> bool:
    """A range name that says inference (and nothing of training's)."""
    return bool(_INFERENCE_RANGE.search(name)) and not is_training_range(name)
