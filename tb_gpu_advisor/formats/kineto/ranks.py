"""Several ranks' traces of one machine -> one :class:`~.parse.KinetoTrace`, their GPUs side by side.

Why: ``torch.distributed`` (DDP, FSDP) runs one process per GPU and ``tensorboard_trace_handler`` writes one
file per process.  Imbalance, launch skew and AllReduce waits are differences *between* those GPUs, so the
analysis must see them in one trace, as it sees the 8 GPUs of a TensorFlow host in one XSpace.

What changes when files are put together:

* times: each file's ``ts`` counts from its own ``baseTimeNanoseconds``; they are moved onto the earliest
  file's base (ranks of one machine share its clock, so their steps line up as they ran);
* ids: ``correlation`` and ``External id`` are unique per process only, so each file's are offset (a launch
  must never find another rank's kernel);
* pids: kept, unless two files share one (then each file's move to a range of their own);
* devices: each rank usually names its own GPU (``args.device`` = local rank) and the ids are kept; where
  two files use the same id (``CUDA_VISIBLE_DEVICES`` narrowed per process), every GPU is renumbered in rank
  order (``distributedInfo.rank``, else worker order);
* names, categories, string pids: one table for all; thread names start with their rank's worker
  (every rank's main thread is ``thread <pid> (python3)``);
* rows: each GPU keeps the rows of its rank's file (``gpu_rows``), since some events are a process's by their file
  alone (Kineto's own ``overhead`` on pid -1, in every rank's file).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from tb_gpu_advisor.formats.kineto.parse import OLD_CATS, KinetoTrace, MemoryColumns
from tb_gpu_advisor.model.damage import as_damage

#: Offset between files' correlation / External ids: above any id one process writes (a counter per event).
ID_STRIDE = 1 << 40
#: Offset between files' pids when two files use the same pid (above any real pid).
PID_STRIDE = 1 << 32
_CONCAT = ("ts_ns", "dur_ns", "pid", "tid", "correlation", "external_id", "device", "stream", "bytes", "graph_id")


def processes(kts: list[KinetoTrace]) -> list[list[int]]:
    """Indexes of ``kts`` grouped by the process whose window they hold, in file order (:func:`one_process` of each
    pair in a group).  The layout asks the same of the files it takes for one process's parts
    (``layout._parts_of_one_process``), so a host's files are read as it placed them.

    Why: one window written as several files (per thread, or cut in two) is one process's trace: its launches in one
    file and their kernels in another link only with the ids kept as written (``merge_ranks`` moves each rank's)."""
    own = [Process.of(kt) for kt in kts]
    groups: list[list[int]] = []
    for i, p in enumerate(own):
        g = next((g for g in groups if all(one_process(own[j], p) for j in g)), None)
        if g is None:
            groups.append([i])
        else:
            g.append(i)
    return groups


@dataclass(frozen=True)
class Process:
    """What tells one process's files from another's: its host events' pids, the header it writes
    (:data:`_SAME`), and the ids its host rows number (category -> sorted ids; :func:`_call_ids`)."""

    host_pids: frozenset[int]
    header: tuple
    ids: tuple[dict[str, np.ndarray], dict[str, np.ndarray]]

    @staticmethod
    def of(kt: KinetoTrace) -> "Process":
        host = kt.pid[(kt.pid >= 0) & (gpu_rows_device(kt) < 0)]
        return Process(frozenset(np.unique(host).tolist()), tuple(json.dumps(kt.meta.get(k), sort_keys=True, default=str) for k in _SAME),
                       (_call_ids(kt, "correlation"), _call_ids(kt, "external_id")))


#: What one process writes alike in each file of its window: its GPUs, its clock's base, its rank.
_SAME = ("deviceProperties", "baseTimeNanoseconds", "distributedInfo")


def one_process(a: Process, b: Process) -> bool:
    """Whether two files hold parts of one process's window: their host events share a pid, they list the same GPUs
    on the same clock base and the same ``distributedInfo``, and no id (``correlation``, ``External id``) is written
    on rows of one category in both -- a process numbers each of its calls, launches and ops once, so two processes'
    files (or two captures of one, each counting from its start: a trace written twice) share ids."""
    if not a.host_pids & b.host_pids or a.header != b.header:
        return False
    for mine, theirs in zip(a.ids, b.ids):
        if any(np.intersect1d(mine.get(c, _NONE), v, assume_unique=True).size for c, v in theirs.items()):
            return False
    return True


_NONE = np.zeros(0, np.int64)


def _call_ids(kt: KinetoTrace, key: str) -> dict[str, np.ndarray]:
    """Category -> the ids ``key`` of the host rows that have one of their own: a runtime call's ``correlation`` (its
    kernels share it, a graph's many), an op's ``External id`` (the calls it makes repeat it, so only rows without a
    ``correlation``)."""
    host = gpu_rows_device(kt) < 0
    rows = host & (kt.correlation >= 0) if key == "correlation" else host & (kt.correlation < 0) & (kt.external_id >= 0)
    ids = getattr(kt, key)
    return {c: np.unique(ids[rows & (kt.cat == k)]) for k, c in enumerate(kt.cats) if (rows & (kt.cat == k)).any()}


def merge_ranks(kts: list[KinetoTrace], workers: list[str], inferred: dict[str, int] | None = None,
                one_process: bool = False) -> KinetoTrace:
    """One trace of all ``kts`` (one per rank, ``workers`` their names), in rank order; ``inferred``: worker -> rank
    of a file that states none, as its layout inferred it (``layout._inferred_rank``).  ``one_process``: the files
    are parts of one process's window (:func:`processes`): its ids, pids, GPUs and threads kept as written, one
    trace as one file's."""
    if one_process:
        return _merge(kts, workers, [UNRANKED] * len(kts), True)
    said = [_rank(kt) if _rank(kt) < UNRANKED else (inferred or {}).get(w, UNRANKED) for kt, w in zip(kts, workers)]
    order = sorted(range(len(kts)), key=lambda i: (said[i], i))
    return _merge([kts[i] for i in order], [workers[i] for i in order], [said[i] for i in order], False)


def _merge(kts: list[KinetoTrace], workers: list[str], said: list[int], one_process: bool) -> KinetoTrace:
    names, name_maps = _union([kt.names for kt in kts])
    cats, cat_maps = _union([kt.cats for kt in kts])
    labels, pid_maps = _union([[kt.pid_labels[k] for k in sorted(kt.pid_labels, reverse=True)] for kt in kts])
    tlabels, tid_maps = _union([[kt.tid_labels[k] for k in sorted(kt.tid_labels, reverse=True)] for kt in kts])
    dev_maps = [{d: d for d in _device_ids(kt)} for kt in kts] if one_process else _device_maps(kts)
    pid_offsets = [0] * len(kts) if one_process else _pid_offsets(kts)
    base = _bases(kts)
    cols: dict[str, list[np.ndarray]] = {k: [] for k in ("name", "cat", *_CONCAT)}
    gpu_pids: dict[int, list[int]] = {}
    gpu_ranks: dict[int, int] = {}
    gpu_rows: dict[int, tuple[int, int]] = {}
    launch: list[tuple[np.ndarray, ...]] = []
    offset = 0
    for i, kt in enumerate(kts):
        dev = gpu_rows_device(kt)
        pid = _relabel(kt.pid, pid_maps[i])
        pid = np.where(pid >= 0, pid + pid_offsets[i], pid)
        host_pids = sorted(set(pid[(dev < 0) & (pid >= 0)].tolist()))
        for g in dev_maps[i].values():
            gpu_pids.setdefault(g, []).extend(host_pids)
            gpu_rows[g] = (offset, offset + len(kt))
            if said[i] < UNRANKED:
                gpu_ranks[g] = said[i]
        cols["name"].append(name_maps[i][kt.name])
        cols["cat"].append(cat_maps[i][kt.cat])
        cols["ts_ns"].append(kt.ts_ns + base[i])
        cols["dur_ns"].append(kt.dur_ns)
        cols["pid"].append(pid)
        cols["tid"].append(_relabel(kt.tid, tid_maps[i]))
        for key in ("correlation", "external_id"):
            v = getattr(kt, key)
            cols[key].append(v if one_process else np.where(v >= 0, v + i * ID_STRIDE, v))
        cols["device"].append(_remap(dev, dev_maps[i]))
        for key in ("stream", "bytes", "graph_id"):
            cols[key].append(getattr(kt, key))
        if kt.launch_row is not None:  # a kernel's launch configuration, its rows after the files before
            launch.append((kt.launch_row + offset, kt.blocks, kt.threads, kt.groups))
        offset += len(kt)
    first = kts[0]
    meta = dict(first.meta) if one_process else _meta(kts, dev_maps)
    if base and any(base):  # the merged ts count from the earliest rank's base: the clock the trace states
        meta["baseTimeNanoseconds"] = min(kt.meta["baseTimeNanoseconds"] for kt in kts)
    return KinetoTrace(
        source=" + ".join(kt.source for kt in kts), names=names, cats=cats,
        **{k: np.concatenate(v) for k, v in cols.items()},
        meta=meta,
        process_names=_by_pid(kts, "process_names", pid_maps, pid_offsets),
        process_labels=_by_pid(kts, "process_labels", pid_maps, pid_offsets),
        thread_names={(_pid(p, pid_maps[i], pid_offsets[i]), _one(t, tid_maps[i])):
                      n if one_process else f"{workers[i]}: {n}"
                      for i, kt in enumerate(kts) for (p, t), n in kt.thread_names.items()},
        pid_labels={-2 - j: s for j, s in enumerate(labels)}, tid_labels={-2 - j: s for j, s in enumerate(tlabels)},
        memory=_by_device(kts, "memory", dev_maps), memory_reserved=_by_device(kts, "memory_reserved", dev_maps),
        mem=_memory_rows(kts, base, pid_maps, pid_offsets, tid_maps, dev_maps),
        ph_counts=_sum_counts(kts), n_events=sum(kt.n_events for kt in kts),
        bytes_read=sum(kt.bytes_read for kt in kts), compressed=any(kt.compressed for kt in kts),
        truncated=any(kt.truncated for kt in kts),
        problems=[as_damage(p).reworded(f"{w}: {p}", file=as_damage(p).file or kt.source)
                  for w, kt in zip(workers, kts) for p in kt.problems], decoder=first.decoder,
        workers=[] if one_process else workers, gpu_pids={} if one_process else gpu_pids,
        gpu_rows={} if one_process else gpu_rows, op_args=_by_row(kts, "op_args"), op_work=_by_row(kts, "op_work"),
        gpu_ranks={} if one_process else gpu_ranks, **_launches(launch),
        # a rank whose window ran nothing on a GPU: its host lines are here, its GPU is no row (h37-probe43w)
        idle_ranks={} if one_process else {workers[i]: (said[i] if said[i] < UNRANKED else -1)
                                           for i, kt in enumerate(kts) if not _gpu_rows(kt).any()},
    )


def _launches(parts: list[tuple[np.ndarray, ...]]) -> dict[str, np.ndarray | None]:
    """The ranks' launch configurations (``launch_row``, ``blocks``, ``threads``, ``groups``), rows in the merged
    columns."""
    if not parts:
        return {}
    rows, blocks, threads, groups = (np.concatenate(c) for c in zip(*parts))
    return {"launch_row": rows, "blocks": blocks, "threads": threads, "groups": groups}


def _by_row(kts: list[KinetoTrace], attr: str) -> dict[int, Any]:
    """Each rank's per-row values (``op_args``: collective messages; ``op_work``: FLOP ops), at the rows its events
    take in the merged columns (rank order)."""
    out: dict[int, Any] = {}
    offset = 0
    for kt in kts:
        out.update({offset + row: a for row, a in getattr(kt, attr).items()})
        offset += len(kt)
    return out


def process_scoped_ids(kt: KinetoTrace) -> int:
    """Make one file's ``External id``s unique where it holds several processes' host events that number them alike
    (TraceLens' ``TraceFuse`` writes a job's ranks into one file: each rank's pids moved by rank x 10^8, its
    correlation and flow ids made unique, its ``External id``s kept as each process counted them).  Each host pid
    whose ops carry ids is a process: its rows' ids move by its index x :data:`ID_STRIDE`, and each GPU row's by its
    launching call's process (the host row of its ``correlation``; -1 where none is found -- no op rather than another
    rank's), and each GPU that one process alone launched on is named that process's (``gpu_pids``, as a merge of
    rank files names them).  Returns the processes moved (0: the ids were unique already, nothing changed).

    Why: an id names its op within its process only; read across four ranks, a MIOpen convolution kernel was
    "aten::relu"'s and "aten::empty"'s (amd/HPCTrainingExamples' fused MI300X DDP ResNet, h37-huntk66)."""
    on_gpu = gpu_rows_device(kt) >= 0
    host = ~on_gpu & (kt.pid >= 0)
    ops = host & (kt.correlation < 0) & (kt.external_id >= 0)
    op_pids = kt.pid[ops]
    if not op_pids.size or not (op_pids != op_pids[0]).any():  # one process (nearly every file): no sort
        return 0
    pids = np.unique(op_pids)
    per = [np.unique(kt.external_id[ops & (kt.pid == p)]) for p in pids.tolist()]
    if np.unique(np.concatenate(per)).size == sum(a.size for a in per):
        return 0
    index = np.searchsorted(pids, kt.pid)
    own = host & (kt.external_id >= 0) & np.isin(kt.pid, pids)
    launches = host & (kt.correlation >= 0) & np.isin(kt.pid, pids)
    order = np.argsort(kt.correlation[launches], kind="stable")
    corr, proc = kt.correlation[launches][order], index[launches][order]
    dev = on_gpu & (kt.external_id >= 0)
    at = np.clip(np.searchsorted(corr, kt.correlation[dev]), 0, max(corr.size - 1, 0))
    found = (corr.size > 0) & (kt.correlation[dev] >= 0)
    found = found & (corr[at] == kt.correlation[dev]) if corr.size else found
    ext = kt.external_id.copy()
    ext[own] += index[own].astype(np.int64) * ID_STRIDE
    moved = ext[dev] + (proc[at].astype(np.int64) * ID_STRIDE if corr.size else 0)
    ext[dev] = np.where(found, moved, -1)
    kt.external_id = ext
    if not kt.gpu_pids:
        kt.gpu_pids = _driving_pids(gpu_rows_device(kt)[dev][found], pids[proc[at][found]] if corr.size else pids[:0])
    if not kt.gpu_ranks:
        kt.gpu_ranks = stated_ranks(kt.gpu_pids, kt.process_names, tagged_ranks(kt))
    return int(pids.size)


#: A process name that states its rank: TraceLens' ``TraceFuse`` names each rank's processes ``RANK <n> - CPU`` and
#: ``RANK <n> - GPU`` (its fused file keeps no ``distributedInfo``).
_RANK_NAME = re.compile(r"^\s*rank\s*[:#]?\s*(\d+)\b", re.IGNORECASE)


def stated_ranks(gpu_pids: dict[int, list[int]], names: dict[int, str],
                 tagged: dict[int, int] | None = None) -> dict[int, int]:
    """GPU -> the rank its driving process's name states (:data:`_RANK_NAME`), or where its name says none the rank
    its collective ops are tagged with (``tagged``, :func:`tagged_ranks`), where every GPU's process states one and no
    two the same; else {} (the processes' order stands).  Why: the ranks of one fused file were read in pid order,
    which is the fuse's order, not a fact the file states -- the file's own words name each rank (h37-straggle66: the
    fused MI300X DDP's late rank is rank 3, GPU 5)."""
    def said_by(p: int) -> int | None:
        m = _RANK_NAME.match(names.get(p, ""))
        return int(m.group(1)) if m else (tagged or {}).get(p)

    out: dict[int, int] = {}
    for gpu, pids in gpu_pids.items():
        said = {r for p in pids if (r := said_by(p)) is not None}
        if len(said) != 1:
            return {}
        out[gpu] = said.pop()
    return out if len(set(out.values())) == len(out) else {}


def tagged_ranks(kt: KinetoTrace) -> dict[int, int]:
    """pid -> the rank every collective op of that process is tagged with in its ``args.rank`` (TraceLens'
    ``TraceFuse`` tags every event of a fused file with its rank), for each process whose ops say one rank; {} where
    none do.  Read from the ops that keep their arguments (``parse.keeps_args``: the collectives, on the host and on
    the GPU as ``nccl:*`` ranges).  Why: a fused file whose processes are not named -- the names are TraceFuse's own
    metadata events, which a filter drops -- still tags each event with its rank, where the ranks were read in pid
    order (session 68; s67's "args.rank not read")."""
    said: dict[int, set[int]] = {}
    for row, a in kt.op_args.items():
        r = a.get("rank")
        if type(r) is int and r >= 0 and 0 <= row < len(kt.pid) and kt.pid[row] >= 0:
            said.setdefault(int(kt.pid[row]), set()).add(r)
    return {p: next(iter(v)) for p, v in said.items() if len(v) == 1}


def _driving_pids(gpus: np.ndarray, pids: np.ndarray) -> dict[int, list[int]]:
    """GPU id -> the host pid that launched its work, for each GPU one process alone launched on (as
    ``KinetoTrace.gpu_pids`` names each rank's GPUs after a merge): the processes of one file read as its ranks."""
    out: dict[int, list[int]] = {}
    for g in np.unique(gpus).tolist():
        who = np.unique(pids[gpus == g])
        if who.size == 1:
            out[int(g)] = [int(who[0])]
    return out


#: Categories whose rows live on a GPU: Kineto writes the device as their pid (``args.device`` only on some); the
#: ranks are merged before the adapter renames PyTorch 1.8-1.10's categories (``Kernel``, ``Memcpy``, ``Memset``), so
#: both names.  Why: read by today's alone, every rank of an old job's files ran nothing on a GPU -- "rank 0's window
#: holds no GPU work: no GPU runtime call" beside its kernels (issue #37, class 1).
_GPU_CATS_NOW = ("kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation")
GPU_CATS = _GPU_CATS_NOW + tuple(old for old, now in OLD_CATS.items() if now in _GPU_CATS_NOW)


def _gpu_rows(kt: KinetoTrace) -> np.ndarray:
    """Per row, whether it lives on a GPU (:data:`GPU_CATS`: a kernel, copy, fill or the GPU's step span)."""
    ids = [i for i, c in enumerate(kt.cats) if c in GPU_CATS]
    return np.isin(kt.cat, np.asarray(ids, dtype=kt.cat.dtype)) if ids else np.zeros(kt.cat.shape, bool)


def gpu_rows_device(kt: KinetoTrace) -> np.ndarray:
    """``args.device``, and for GPU rows without it (``gpu_user_annotation``) their pid: once files are merged
    the pid no longer tells one rank's GPU 0 from another's."""
    return np.where((kt.device < 0) & _gpu_rows(kt) & (kt.pid >= 0), kt.pid, kt.device)


#: The rank of a file that states none (and none was inferred): after every stated rank, in file order.
UNRANKED = 1 << 30


def _rank(kt: KinetoTrace) -> int:
    """``distributedInfo.rank`` (written under ``torch.distributed``), else :data:`UNRANKED`: file order."""
    info = kt.meta.get("distributedInfo")
    rank = info.get("rank") if isinstance(info, dict) else None
    return rank if type(rank) is int and rank >= 0 else UNRANKED


def _union(tables: list[list[str]]) -> tuple[list[str], list[np.ndarray]]:
    """One string table for several, and per table the array old id -> new id."""
    out: dict[str, int] = {}
    maps = []
    for t in tables:
        maps.append(np.asarray([out.setdefault(s, len(out)) for s in t], dtype=np.int64).reshape(-1))
    return list(out), maps


def _relabel(ids: np.ndarray, new_of_label: np.ndarray) -> np.ndarray:
    """String pids/tids are -2, -3, ... (label k at -2-k): move them to the merged labels' ids."""
    if not new_of_label.size or not (ids <= -2).any():
        return ids
    k = np.clip(-2 - ids, 0, new_of_label.size - 1)
    return np.where(ids <= -2, -2 - new_of_label[k], ids)


def _one(v: int, new_of_label: np.ndarray) -> int:
    return int(_relabel(np.asarray([v], np.int64), new_of_label)[0])


def _device_ids(kt: KinetoTrace) -> list[int]:
    return sorted(set(kt.device[kt.device >= 0].tolist()) | set(_property_ids(kt)))


def _device_maps(kts: list[KinetoTrace]) -> list[dict[int, int]]:
    """Per file, old device id -> merged id: kept when no two files share an id, else numbered in rank order."""
    ids = [_device_ids(kt) for kt in kts]
    seen: set[int] = set()
    clash = False
    for dev in ids:
        clash |= bool(seen & set(dev))
        seen |= set(dev)
    if not clash:
        return [{d: d for d in dev} for dev in ids]
    maps, n = [], 0
    for dev in ids:
        maps.append({d: n + j for j, d in enumerate(dev)})
        n += len(dev)
    return maps


def _property_ids(kt: KinetoTrace) -> list[int]:
    """Device ids of ``deviceProperties`` that the file's events use (a process lists every visible GPU)."""
    used = set(kt.device[kt.device >= 0].tolist())
    props = kt.meta.get("deviceProperties")
    return [p["id"] for p in props if isinstance(p, dict) and p.get("id") in used] if isinstance(props, list) else []


def _remap(dev: np.ndarray, mapping: dict[int, int]) -> np.ndarray:
    if not mapping or all(k == v for k, v in mapping.items()):
        return dev
    out = dev.copy()
    for old, new in mapping.items():
        out[dev == old] = new
    return out


def _bases(kts: list[KinetoTrace]) -> list[int]:
    """Per file, ns to add so every file counts from the earliest ``baseTimeNanoseconds`` (0 when a file has none:
    then the files' own clocks are taken as shared)."""
    bases = [kt.meta.get("baseTimeNanoseconds") for kt in kts]
    if not all(type(b) is int for b in bases):
        return [0] * len(kts)
    low = min(bases)
    return [b - low for b in bases]


def _meta(kts: list[KinetoTrace], dev_maps: list[dict[int, int]]) -> dict:
    """The first rank's top-level keys; ``deviceProperties`` of every rank's used GPUs under their merged ids."""
    meta = dict(kts[0].meta)
    props = []
    for kt, mapping in zip(kts, dev_maps):
        for p in kt.meta.get("deviceProperties") or []:
            if isinstance(p, dict) and p.get("id") in mapping:
                props.append({**p, "id": mapping[p["id"]]})
    meta["deviceProperties"] = props
    meta["distributedInfo"] = [kt.meta.get("distributedInfo") for kt in kts]
    return meta


def _by_pid(kts: list[KinetoTrace], attr: str, pid_maps: list[np.ndarray], offsets: list[int]) -> dict[int, str]:
    return {_pid(p, pid_maps[i], offsets[i]): v for i, kt in enumerate(kts) for p, v in getattr(kt, attr).items()}


def _pid(v: int, new_of_label: np.ndarray, offset: int) -> int:
    p = _one(v, new_of_label)
    return p + offset if p >= 0 else p


def _pid_offsets(kts: list[KinetoTrace]) -> list[int]:
    """Per file, what to add to its pids: 0, unless two files use one pid (copies of a trace, pid namespaces
    of containers); then each file's pids move to a range of their own, so no two ranks share a host line."""
    seen: set[int] = set()
    clash = False
    for kt in kts:  # host pids: a GPU row's pid is its device, which every rank may call 0
        pids = set(kt.pid[(kt.pid >= 0) & (gpu_rows_device(kt) < 0)].tolist())
        clash |= bool(seen & pids)
        seen |= pids
    return [i * PID_STRIDE for i in range(len(kts))] if clash else [0] * len(kts)


def _by_device(kts: list[KinetoTrace], attr: str, dev_maps: list[dict[int, int]]) -> dict[int, int]:
    out: dict[int, int] = {}
    for kt, mapping in zip(kts, dev_maps):
        for d, v in getattr(kt, attr).items():
            out[mapping.get(d, d)] = max(v, out.get(mapping.get(d, d), v))
    return out


def _memory_rows(kts: list[KinetoTrace], base: list[int], pid_maps: list[np.ndarray], pid_offsets: list[int],
                 tid_maps: list[np.ndarray], dev_maps: list[dict[int, int]]) -> MemoryColumns | None:
    """Every rank's ``[memory]`` rows on the merged clock, host lines and GPU ids (None where no file has any)."""
    parts = []
    for i, kt in enumerate(kts):
        m = kt.mem
        if m is None:
            continue
        pid = _relabel(m.pid, pid_maps[i])
        parts.append(MemoryColumns(
            ts_ns=m.ts_ns + base[i], pid=np.where(pid >= 0, pid + pid_offsets[i], pid), tid=_relabel(m.tid, tid_maps[i]),
            device=np.where(m.device >= 0, _remap(m.device, dev_maps[i]), m.device), dtype=m.dtype, bytes=m.bytes,
            total=m.total, reserved=m.reserved, addr=m.addr))
    if not parts:
        return None
    return MemoryColumns(**{f: np.concatenate([getattr(p, f) for p in parts]) for f in MemoryColumns.__dataclass_fields__})


def _sum_counts(kts: list[KinetoTrace]) -> dict[str, int]:
    out: dict[str, int] = {}
    for kt in kts:
        for k, v in kt.ph_counts.items():
            out[k] = out.get(k, 0) + v
    return out

