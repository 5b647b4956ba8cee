"""Collective kernels of every communication library, in one table: what counts as communication on the GPU.

NCCL and RCCL are not the only libraries that move data between GPUs: serving engines bring their own all-reduce
(vLLM's and SGLang's ``cross_device_reduce_*``, ROCm's quick all-reduce), mixture-of-experts training its own
all-to-all (DeepEP's ``dispatch`` / ``combine``), and NVSHMEM, MSCCL++, TensorRT-LLM and PyTorch's symmetric memory
theirs.  Their time is communication: it is booked as collectives, never as compute, and the exposed-communication
check sees it.  Each family: the library, a pattern on the kernel's name, and the collective it runs when the name
does not say (``None``: typed from the name, or by the host op that launched it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from tb_gpu_advisor.devices.codes import head

#: The most ranks a job's communication can hold: NCCL counts a communicator's ranks in a C ``int`` (``nranks``), as
#: c10d numbers a process group's (``rank``).  A larger count or rank number is damage, no job's (h37-rev63b: NCCL's
#: "No. of ranks" 10**30; h37-review64: a "Process Group Ranks" of 10**23).
MAX_RANKS = (1 << 31) - 1


#: The collectives whose ranks leave as their own part is done, not together (``Broadcast``: the root returns once it
#: has sent, a rank once its data is in and passed on): their ends falling apart is no sign of two calls, and a rank
#: that leaves early waited for no one after (h37-late67: the fused MI300X DDP's root left each buffer broadcast after
#: 15 us, ranks 1-2 after 1.3 ms; of a 53-element one ranks 1-2 left before rank 3 entered).
ROOTED_TYPES = frozenset({"Broadcast"})


@dataclass(frozen=True)
class Family:
    library: str
    pattern: re.Pattern
    type: str | None  # the collective it runs, when its name does not say
    #: what the library exchanges whatever the model (:data:`EXCHANGES`' kinds): DeepEP moves only MoE tokens
    exchange: str | None = None


FAMILIES: tuple[Family, ...] = (
    Family("NCCL / RCCL", re.compile(r"nccl", re.I), None),  # ncclKernel_*, ncclDevKernel_* (RCCL keeps the names)
    Family("vLLM / SGLang custom all-reduce", re.compile(r"cross_device_reduce"), "AllReduce"),
    Family("ROCm quick all-reduce", re.compile(r"quickreduce|quick_?all_?reduce|allreduce_prototype", re.I), "AllReduce"),
    Family("TensorRT-LLM all-reduce", re.compile(r"(one|two)Shot\w*AllReduce|lamport\w*AllReduce|allReduceKernel|"
                                                 r"AllReduceKernel|allreduce_fusion|ar_fusion", re.I), "AllReduce"),
    Family("PyTorch symmetric memory", re.compile(r"(one|two)_shot_all_reduce|multimem_all_reduce|multimem_all_gather"),
           None),
    # DeepEP's expert-parallel all-to-all: open DeepEP names its kernels ``deep_ep::...``; DeepSeek's own build (its
    # published training profile) ``dpsk::ep::internode::...`` -- the library is its (intra|inter)node[_ll] namespace
    # of ``ep``, not the outer name, and its count exchanges (``notify_dispatch``, ``cached_notify``) move data
    # between GPUs as the dispatch and combine do (h37-survey35)
    Family("DeepEP", re.compile(r"(?:deep_ep|\bep::(?:intra|inter)node(?:_ll)?)::.*(?:dispatch|combine|notify)"),
           "AllToAll", "experts"),
    Family("MSCCL++", re.compile(r"mscclpp", re.I), None),
    Family("NVSHMEM", re.compile(r"nvshmem", re.I), None),
    Family("XLA / generic", re.compile(r"allreduce|all_reduce|reducescatter|reduce_scatter|allgather|all_gather|alltoall|"
                                       r"collective-permute", re.I), None),
)


@lru_cache(maxsize=65536)
def family(name: str) -> Family | None:
    """The communication library of a kernel, by its name; None for any other kernel."""
    n = head(name)
    return next((f for f in FAMILIES if f.pattern.search(n)), None)


def is_collective(name: str) -> bool:
    return family(name) is not None


#: What a kernel beside an all-to-all says the exchange is for, in the order they are tried (an FBGEMM permute is the
#: embeddings', not a token permute).  The all-to-all itself is the same NCCL/RCCL call for all three; its neighbours
#: on the same GPU are not: a recommender's sparse part looks rows up in embedding tables (FBGEMM's
#: ``split_embedding_codegen_*``, ``permute_pooled_embs``, ATen's ``EmbeddingBag``) and sends them to the ranks that
#: own the batch; a mixture-of-experts layer routes each token (the router's top-k, expert counts and token permutes)
#: and runs the experts as grouped GEMMs (``fused_moe``, ``m_grouped``); sequence parallelism (DeepSpeed-Ulysses,
#: xDiT) exchanges heads for sequence around attention (FlashAttention, CK's ``fmha``, cuDNN SDPA, Triton ``_attn_``).
#: Rotary *embedding* kernels (``rotary_embedding``) are attention's, so the embeddings' words are the lookup's own.
EXCHANGES: tuple[tuple[str, re.Pattern], ...] = (
    ("embeddings", re.compile(r"split_embedding|embedding_?bag|EmbeddingBag|permute_pooled_embs|"
                              r"fbgemm_gpu::\w*(?:permute|jagged|index_select|embedding)|batch_index_select|"
                              r"bounds_check_indices", re.I)),
    ("experts", re.compile(r"top_?k|moe|expert|grouped_?gemm|m_grouped|group_?gemm|GemmGrouped|GroupProblemShape|"
                           r"permute_tokens|unpermute|"
                           r"align_block_size", re.I)),
    ("sequence", re.compile(r"flash_?(?:fwd|bwd|attn)|FlashAttn|FlashAttention|fmha|_attn_|attention|sdpa", re.I)),
)


@lru_cache(maxsize=65536)
def exchange_of(name: str) -> str | None:
    """What an all-to-all beside this kernel exchanges (:data:`EXCHANGES`' kind), None for a kernel that does not say:
    a dense GEMM, an element-wise op, a copy."""
    n = head(name)
    return next((kind for kind, pattern in EXCHANGES if pattern.search(n)), None)


#: The collective libraries a process group can run on that move tensors through the host's memory, on the CPU, by the
#: name a framework gives its backend (PyTorch's ``dist.init_process_group(backend=...)``, its c10d annotations
#: ``gloo:gather``), each with the library's own name.  Gloo is PyTorch's CPU backend (it takes a GPU tensor for a few
#: collectives only, copied through the host); MPI's backend moves host memory unless built CUDA-aware.  NCCL and RCCL
#: (``nccl``), oneCCL's ``xccl`` and Ascend's ``hccl`` move device memory between GPUs instead; UCC does either.  Why
#: here: a window that holds such a library's collectives and nothing else holds no GPU work by that library's nature
#: -- the job ran its communication on the CPU, by design or because its tensors never reached a GPU --, not a GPU job
#: whose device records were lost (h37-gloo68: Princeton COS 568's 4-rank BERT traces, 69,038 ``gloo:gather`` /
#: ``gloo:scatter`` and nothing else, read "Was the GPU visible? ... ProfilerActivity.<DEVICE>").
CPU_BACKENDS: dict[str, str] = {"gloo": "Gloo", "mpi": "MPI"}


def cpu_backend(name: str) -> str:
    """The library's own name of a process group's backend that runs its collectives on the CPU (:data:`CPU_BACKENDS`:
    "gloo" -> "Gloo"), "" for any other backend or none."""
    return CPU_BACKENDS.get(name.strip().lower(), "") if name else ""
