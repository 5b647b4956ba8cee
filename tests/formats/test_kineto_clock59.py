"""A Kineto trace states its 0 on the clock its file counts on (``Trace.clock_ns``), so one machine's rank files read
apart place each other's times (h37-ranks59: a peer's one-time costs from its own rank folder).

Real: ``wild/tp_rtx4090_two_ranks`` (tugot17/tokenomics-from-first-principles, MIT): both ranks of one machine, one
``baseTimeNanoseconds``.  Truth from the raw JSON: a kernel's time on the clock is ``baseTimeNanoseconds`` + its
``ts`` (us) x 1000, the alignment ``formats.kineto.ranks`` merges one machine's ranks by.  BASE (91102037): no
``clock_ns``, no ``same_clock``.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import numpy as np

from tb_gpu_advisor import formats
from tb_gpu_advisor.devices.codes import KIND_COLLECTIVE, KIND_KERNEL
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.formats.kineto.layout import KinetoLayout
from tb_gpu_advisor.model.logdir import HostFile
from tests.support.paths import FIXTURES

PAIR = FIXTURES / "wild" / "tp_rtx4090_two_ranks"


def _files() -> list[HostFile]:
    out = []
    for p in sorted(PAIR.glob("*.json.gz")):
        st = os.stat(p)
        out.append(HostFile(p.name.split(".")[0], str(p), st.st_size, st.st_mtime_ns, "kineto"))
    return out


def _raw_kernels_ns(path: str) -> list[int]:
    doc = json.loads(gzip.decompress(Path(path).read_bytes()))
    base = int(doc["baseTimeNanoseconds"])
    return sorted(base + round(float(e["ts"]) * 1000) for e in doc["traceEvents"] if e.get("cat") == "kernel")


def _trace_kernels_ns(trace) -> list[int]:  # noqa: ANN001 - a Trace
    return sorted(int(trace.clock_ns) + int(s) // 1000 for d in trace.devices
                  for s in d.start[np.isin(d.kind, (KIND_KERNEL, KIND_COLLECTIVE))].tolist())


def test_each_rank_read_alone_states_its_kernels_on_the_shared_clock() -> None:
    """Each file read alone: every kernel at base + ts, to the nanosecond; the two ranks' first kernels 10.26 ms apart
    on that clock, as their raw times say."""
    firsts = []
    for hf in _files():
        trace = formats.read(hf)
        raw = _raw_kernels_ns(hf.path)
        assert _trace_kernels_ns(trace) == raw
        firsts.append(raw[0])
    assert abs(abs(firsts[0] - firsts[1]) - 10_260_489) < 1_000, firsts


def test_the_merged_ranks_state_the_same_clock() -> None:
    """The two files merged as one machine's host (the session as discovered): each kernel at the same place on the
    clock as in its own file."""
    (s,) = [s for s in discover(str(PAIR.parent)) if s.run == PAIR.name]
    (host,) = s.hosts
    merged = formats.read(host)
    assert _trace_kernels_ns(merged) == sorted(t for hf in _files() for t in _raw_kernels_ns(hf.path))


def test_one_machines_rank_files_share_a_clock() -> None:
    """The layout says the two files count on one clock (their headers say one machine: one job's groups, the same
    GPUs, one clock and pid counter), either way round."""
    a, b = _files()
    layout = KinetoLayout()
    assert layout.same_clock(a, b) and layout.same_clock(b, a)
