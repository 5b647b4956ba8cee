"""PyTorch 2.0's memory trace page (``torch.cuda._memory_viz.trace_plot`` before 2.1) -> the neutral trace model.

That page holds no snapshot: the viewer drew the allocator's history itself and kept only what it draws, in one
script object ``let alloc_data = {...}``:

* ``elements_size`` and ``elements_info``: per allocation its bytes and its stack (an index into ``suffix_table``,
  whose entries ``[string, parent]`` chain the frames innermost first; the first string names the allocation,
  ``"36.8KiB allocation"``, the others are ``file:line:function``, resolved through ``string_table``);
* ``actions``: allocation indices in the order they happened -- an allocation's first one made it, its second freed it;
* ``initially_allocated``: the allocations live before the history began.

So it gives the allocated bytes after each action, every allocation's stack, and what was live at the end -- but no
times (each action counts one microsecond, as a PyTorch 2.0 snapshot's entries do), no segments (reserved bytes are
unknown) and no OOM.  Survey h37-survey17: zdevito/zdevito.github.io's ``assets/trace.html`` (a ResNet-50's
``model.cuda()``, forward and backward: 458 allocations, 664 actions, 289.6 MiB at the peak, 146.4 MiB live at the
end, replayed by hand) and ``assets/cudagraph.html``.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

from tb_gpu_advisor.formats.snapshot import reader
from tb_gpu_advisor.model.damage import cut
from tb_gpu_advisor.model.trace import DeviceEvents, MemoryEvents, MemorySnapshot, Trace

_START = re.compile(rb"let\s+alloc_data\s*=\s*")
_FRAME = re.compile(r"^(.*?):(\d+):(.*)$", re.S)
#: The page's lists that must be there, with the type of their items.
_LISTS = ("actions", "elements_size", "elements_info", "suffix_table", "string_table")
TIME_BASE = "PyTorch 2.0's drawn page: its first action (no times: one microsecond an action)"
SOURCE = "PyTorch 2.0 memory trace page (torch.cuda._memory_viz.trace_plot)"


def alloc_data(data: bytes) -> dict | str:
    """The page's ``alloc_data`` object, else why it cannot be read, in words."""
    at = _START.search(data)
    if at is None:
        return "PyTorch 2.0's memory trace page, but no `alloc_data` in it"
    try:
        doc, _ = json.JSONDecoder().raw_decode(data[at.end():].decode("utf-8", "replace"))
    except ValueError as e:
        return f"PyTorch 2.0's memory trace page whose `alloc_data` is not JSON ({e})"
    except RecursionError:
        return "PyTorch 2.0's memory trace page whose `alloc_data` is nested deeper than any page the viewer draws"
    if not isinstance(doc, dict) or not all(isinstance(doc.get(k), list) for k in _LISTS):
        return "PyTorch 2.0's memory trace page whose `alloc_data` lacks its lists (" + ", ".join(_LISTS) + ")"
    return doc


def read_drawn(data: bytes, path: str, host: str) -> Trace:
    """The trace of a drawn page's history (``reader.SnapshotReadError`` where it is not one we can read)."""
    doc = alloc_data(data)
    if isinstance(doc, str):
        raise reader.SnapshotReadError(path, doc)
    sizes = _ints(doc["elements_size"])
    n = len(sizes)
    actions = _ints(doc["actions"])
    if sizes is None or actions is None or not n or any(s < 0 for s in sizes) \
            or any(not 0 <= a < n for a in actions):
        raise reader.SnapshotReadError(path, "PyTorch 2.0's memory trace page whose allocations are not sizes and "
                                             "indices (`elements_size`, `actions`)")
    initial = [e for e in (_ints(doc.get("initially_allocated") or []) or []) if 0 <= e < n]
    work = max(reader.MIN_WORK, reader.WORK_PER_BYTE * len(data))
    frames, left_out = _stacks(doc, n, work)
    budget = reader._Budget(work)
    live = dict.fromkeys(initial)
    delta = np.zeros(len(actions), np.int64)
    for k, e in enumerate(actions):  # first sight makes it, the second frees it
        if e in live:
            del live[e]
            delta[k] = -sizes[e]
        else:
            live[e] = None
            delta[k] = sizes[e]
    labels: dict[str, int] = {}
    label_of: dict[int, int] = {}  # id(frames) -> label: allocations of one stack share its list
    for chain in frames:
        if id(chain) not in label_of:
            label_of[id(chain)] = labels.setdefault(reader.user_frame(reader._frames(chain)), len(labels))
    op = np.array([label_of[id(frames[e])] for e in actions], np.int32)
    phase = np.array([budget.phase(frames[e]) if delta[k] > 0 else 0 for k, e in enumerate(actions)], np.int8)
    start = sum(sizes[e] for e in initial)
    events = MemoryEvents(gpu=0, source=SOURCE, baseline="absolute", t=np.arange(len(actions), dtype=np.int64) * 10**6,
                          delta=delta, allocated=start + np.cumsum(delta), reserved=np.full(len(actions), -1, np.int64),
                          addr=np.asarray(actions, np.int64), op=op, phase=phase, op_names=list(labels))
    end = [reader._Live(sizes[e], e, frames[e], None, budget) for e in live]
    snap = MemorySnapshot(state={0: (0, int(sum(b.size for b in end)), 0, 0)},
                          blocks={0: [b.block(budget) for b in sorted(end, key=lambda b: -b.size)[:reader.TOP_BLOCKS]]},
                          stacks={0: reader._stacks(end, budget)})
    return Trace(format="snapshot", host=host, path=path, size_bytes=len(data), h=reader._empty_host(),
                 devices=[DeviceEvents(**reader._empty_device(0))], num_events=len(actions),
                 span_ps=None, time_base=TIME_BASE,  # no times: as a PyTorch 2.0 snapshot's, none to span
                 memory={0: events} if actions else {}, snapshot=snap,
                 problems=[cut("work_budget", f"the page's stacks describe more frames than its size warrants: "
                               f"the first {work:,} were read, the others' allocations have no stack")] if left_out else [],
                 producer={"kind": "memory snapshot", "viewer": "PyTorch 2.0 trace_plot"})


def _ints(v: Any) -> list[int] | None:
    """``v`` when it is a list of ints, else None."""
    return v if isinstance(v, list) and all(type(x) is int for x in v) else None


def _stacks(doc: dict, n: int, work: int) -> tuple[list[list[dict]], bool]:
    """Per allocation its frames as a snapshot records them (``filename``, ``line``, ``name``), innermost first: the
    ``suffix_table`` chain from its ``elements_info`` entry, the allocation's own description left out; and whether
    some were left out.  A chain that loops or leaves the table ends there; at most ``reader.MAX_SCAN`` frames an
    allocation, ``work`` frames in all (a table of a few bytes an entry can chain each allocation through all of it)."""
    table, strings, info = doc["suffix_table"], doc["string_table"], doc["elements_info"]
    memo: dict[Any, list[dict]] = {}
    out, spent = [], 0
    for e in range(n):
        k = info[e] if e < len(info) and type(info[e]) is int else None
        chain = memo.get(k)
        if chain is None:
            chain = memo[k] = _chain(table, strings, k, max(0, min(reader.MAX_SCAN, work - spent)))
            spent += len(chain)
        out.append(chain)
    return out, spent >= work


def _chain(table: list, strings: list, at: Any, limit: int) -> list[dict]:
    """The frames from suffix ``at`` outwards, at most ``limit``."""
    chain: list[dict] = []
    seen: set[int] = set()
    while type(at) is int and 0 <= at < len(table) and at not in seen and len(chain) < limit:
        seen.add(at)
        entry = table[at]
        if not (isinstance(entry, list) and len(entry) == 2 and type(entry[0]) is int
                and 0 <= entry[0] < len(strings) and isinstance(strings[entry[0]], str)):
            break
        m = _FRAME.match(strings[entry[0]])
        if m is not None:
            chain.append({"filename": m.group(1), "line": int(m.group(2)), "name": m.group(3)})
        at = entry[1]
    return chain
