"""What a job's all-to-all exchanges, read from the job's own work beside it (issue #37 class 3: each wait belongs
to its cause).

An all-to-all is one NCCL/RCCL call whatever it moves, so its kernel's name cannot say what it is for, and each
purpose has its own fix: a recommender's embedding rows (TorchRec pipelines the next batch's exchange), a
mixture-of-experts layer's tokens (one micro-batch's dispatch and combine overlapped with another's compute, the
experts balanced), or sequence parallelism's heads around attention (the exchange overlapped with the QKV
projection, or ring attention).  What runs right before and after it on the same GPU says which: embedding lookups,
the router's top-k and the experts' grouped GEMMs, or attention (``devices.collectives.EXCHANGES``); a library that
moves only one kind (DeepEP: MoE tokens) says it by itself.  A model's name is never read.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from tb_gpu_advisor import devices
from tb_gpu_advisor.devices import collectives
from tb_gpu_advisor.devices.codes import KIND_COLLECTIVE, KIND_KERNEL
from tb_gpu_advisor.model.trace import DeviceEvents, HostEvents, Trace

#: how many compute kernels on each side of an all-to-all (in start order on its GPU) are read for its neighbour: its
#: own layer's, past the copies and element-wise glue between (a real DLRM rank: 2-3 of them before the lookup)
NEIGHBOURS = 8
#: the share of the calls' votes one kind needs to be the job's: a clear majority, else the exchange stays unnamed
MAJORITY = 2 / 3
#: a call whose library names its exchange (DeepEP) counts as both its sides
LIBRARY_VOTES = 2


def exchange_tag(kind: str) -> str:
    """The job tag of an exchange kind (``exchange_experts``): the fixes' variant of the all-to-all follows it."""
    return f"exchange_{kind}"


def exchange_kind(trace: Trace, launches: list[np.ndarray]) -> str | None:
    """What the job's all-to-all calls exchange (a kind of ``devices.collectives.EXCHANGES``), None without an
    all-to-all or without a clear majority of its calls' neighbours.  ``launches``: per GPU, each device event's host
    launch record (-1 none)."""
    votes: dict[str, int] = {}
    host_a2a: list[np.ndarray] = []

    def host_ops() -> np.ndarray:  # every distinct host name classified: only once a kernel's name does not say
        if not host_a2a:
            host_a2a.append(_host_all_to_all(trace.h))
        return host_a2a[0]
    for d, launch in zip(trace.devices, launches):
        for kind, n in _gpu_votes(d, launch, trace.h, host_ops).items():
            votes[kind] = votes.get(kind, 0) + n
    total = sum(votes.values())
    if not total:
        return None
    kind = max(votes, key=votes.__getitem__)
    return kind if votes[kind] >= MAJORITY * total else None


def _host_all_to_all(h: HostEvents) -> np.ndarray:
    """(start, end) ps of the host ops that run an all-to-all (``nccl:all_to_all``, ``c10d::alltoall_base_``), sorted
    by start: NCCL before 2.19 runs one as point-to-point kernels, whose names do not say it."""
    if not len(h):
        return np.zeros((0, 2), np.int64)
    mask = h.name_mask(lambda x: devices.collective_type(x) == "AllToAll")
    iv = np.stack([h.start[mask], h.end[mask]], axis=1).astype(np.int64)
    return iv[np.argsort(iv[:, 0], kind="stable")]


def _inside(t: np.ndarray, iv: np.ndarray) -> np.ndarray:
    """Bool per time of ``t``: inside some interval of ``iv`` (sorted by start), however they nest."""
    if not len(iv) or not len(t):
        return np.zeros(len(t), bool)
    reach = np.maximum.accumulate(iv[:, 1])
    k = np.searchsorted(iv[:, 0], t, side="right") - 1
    return (k >= 0) & (reach[np.maximum(k, 0)] >= t)


def _gpu_votes(d: DeviceEvents, launch: np.ndarray, h: HostEvents,
               host_a2a: Callable[[], np.ndarray]) -> dict[str, int]:
    """One GPU's votes: per all-to-all kernel, its library's kind (DeepEP) or the kind of the nearest compute kernel
    that says one on each side.  ``host_a2a``: the host's all-to-all ops (:func:`_host_all_to_all`), asked for only
    where a collective kernel's name gives no type or a point-to-point one (issue #38: classifying every host name
    costs seconds on an Nsight export of named steps)."""
    coll = np.flatnonzero(d.kind == KIND_COLLECTIVE)
    if not len(coll):
        return {}
    named = np.array([devices.collective_type(n) or "" for n in d.names], dtype=object)[d.name[coll]]
    launched = launch[coll] if len(launch) else np.full(len(coll), -1)
    ask = ((named == "") | (named == "SendRecv")) & (launched >= 0)
    by_op = np.zeros(len(coll), bool)
    if ask.any() and len(h):
        by_op[ask] = _inside(h.start[launched[ask]].astype(np.int64), host_a2a())
    a2a = coll[(named == "AllToAll") | by_op]
    if not len(a2a):
        return {}
    compute = np.flatnonzero(d.kind == KIND_KERNEL)
    compute = compute[np.argsort(d.start[compute], kind="stable")]
    said = [collectives.exchange_of(n) for n in d.names]
    kinds = np.array([said[int(i)] or "" for i in d.name[compute]], dtype=object)
    votes: dict[str, int] = {}
    for i in a2a:
        fam = collectives.family(d.names[int(d.name[i])])
        if fam is not None and fam.exchange:
            votes[fam.exchange] = votes.get(fam.exchange, 0) + LIBRARY_VOTES
            continue
        at_start = int(np.searchsorted(d.start[compute], d.start[i], side="left"))
        at_end = int(np.searchsorted(d.start[compute], d.end[i], side="left"))
        for side in (kinds[max(0, at_start - NEIGHBOURS):at_start][::-1], kinds[at_end:at_end + NEIGHBOURS]):
            kind = next((k for k in side if k), None)
            if kind:
                votes[kind] = votes.get(kind, 0) + 1
    return votes


def tagged_exchange(tags: "tuple[str, ...] | list[str]") -> str | None:
    """The exchange kind a job's tags carry (:func:`exchange_tag`), None where the job stage named none."""
    prefix = exchange_tag("")
    return next((t[len(prefix):] for t in tags if t.startswith(prefix)), None)
