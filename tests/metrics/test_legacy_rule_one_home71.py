"""Which streams CUDA's legacy default stream orders against each other is one rule with one home
(``DeviceEvents.legacy_ordered``), asked by the copies' reading (``metrics.memcpy._copy_streams``: is a copy's
stream tied to a kernels' stream) and the handoffs' (``metrics.breakdown``) alike.  Before (main a717fd14) the
copies read it by a rule of their own (``metrics.memcpy._legacy_tied``: per context, the kinds again), two readings
of one semantics (h37-copy71's Left 3; h37-onehome71).

The first test fails on a717fd14: the copies never ask the model's rule, so a rule that orders nothing leaves their
legacy share at 1.0.  The second is the control (passes there too): over every stated kind, none, two contexts or
none stated and every set of kernels' streams, the copies read the same ties as the old rule, kept here as the
reference.
"""

from __future__ import annotations

import dataclasses
import itertools
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from synthetic import nsysexport
from tb_gpu_advisor import devices
from tb_gpu_advisor.formats.nsys.reader import read_trace
from tb_gpu_advisor.formats.snapshot.reader import _empty_device
from tb_gpu_advisor.metrics import memcpy
from tb_gpu_advisor.model.trace import (STREAM_BLOCKING, STREAM_KINDS, STREAM_LEGACY_DEFAULT, STREAM_PER_THREAD_DEFAULT,
                                        DeviceEvents)
from tb_gpu_advisor.runtime.pipeline import host_metrics

PID = 31415
_DDL = ("CREATE TABLE TARGET_INFO_CUDA_STREAM (streamId INTEGER NOT NULL, hwId INTEGER NOT NULL, vmId INTEGER NOT "
        "NULL, processId INTEGER NOT NULL, contextId INTEGER NOT NULL, priority INTEGER NOT NULL, flag INTEGER NOT NULL)")
NULL, DEFAULT = 3, 1  # CUPTI's flags as Nsight numbers them


def _tied_export(path: Path) -> Path:
    """h37-copy71's control export: kernels on stream 7 (listed NULL), pinned uploads on blocking stream 13, one
    process, one context -- the NULL stream's kernels hold the uploads in series."""
    nsysexport.write_pageable_copy_loop(str(path), iterations=40, pinned=True, async_calls=True, kernel_us=60.0,
                                        upload_stream=13)
    con = sqlite3.connect(path)
    con.execute(_DDL)
    con.executemany("INSERT INTO TARGET_INFO_CUDA_STREAM VALUES (?, 0, 0, ?, ?, 0, ?)",
                    [(7, PID, 1, NULL), (13, PID, 1, DEFAULT)])
    con.commit()
    con.close()
    return path


def _h2d_shares(trace) -> tuple[float, float]:
    m = host_metrics(trace)
    m = m[0] if isinstance(m, tuple) else m
    c = next(c for c in m.memcpy if c.direction == "h2d")
    return c.own_stream_share or 0.0, c.legacy_stream_share or 0.0


def test_the_copies_ask_the_model_s_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trace = read_trace(str(_tied_export(tmp_path / "r.sqlite")))
    assert _h2d_shares(trace) == (0.0, pytest.approx(1.0))  # as CUDA orders them
    monkeypatch.setattr(DeviceEvents, "legacy_ordered", lambda self, a, b: False)
    assert _h2d_shares(trace) == (pytest.approx(1.0), 0.0)  # the copies follow the one rule, whatever it says


def _old_legacy_tied(kinds: dict[int, str], kernels: list[int], n: int, contexts: dict[int, int]) -> np.ndarray:
    """``metrics.memcpy._legacy_tied`` as main a717fd14 had it: the reference."""
    out = np.zeros(max(n, 1), dtype=bool)
    serial = (STREAM_LEGACY_DEFAULT, STREAM_BLOCKING, STREAM_PER_THREAD_DEFAULT)
    for c in {contexts.get(i, -1) for i in kinds}:
        mine = {i: k for i, k in kinds.items() if contexts.get(i, -1) == c}
        busy = [mine.get(int(k)) for k in kernels]
        if not any(k in serial for k in busy):
            continue
        legacy_busy = STREAM_LEGACY_DEFAULT in busy
        for i, kind in mine.items():
            if 0 <= i < out.size and (kind == STREAM_LEGACY_DEFAULT or (kind in serial and legacy_busy)):
                out[i] = True
    return out


def test_the_copies_read_the_ties_the_old_rule_read() -> None:
    """Control: three streams, each of a stated kind or none, in context 1, 2 or none stated; each set of them
    running kernels, the others one copy each.  Before and after: the same copies tied."""
    n, checked = 3, 0
    base = DeviceEvents(**_empty_device(0))
    for kinds in itertools.product((None, *STREAM_KINDS), repeat=n):
        stated = {i: k for i, k in enumerate(kinds) if k is not None}
        for ctx in itertools.product((None, 1, 2), repeat=n):
            contexts = {i: c for i, c in enumerate(ctx) if c is not None}
            for r in range(1, n + 1):
                for busy in itertools.combinations(range(n), r):
                    kind = np.array([devices.KIND_KERNEL if s in busy else devices.KIND_H2D for s in range(n)], np.int8)
                    z = np.arange(n, dtype=np.int64)
                    d = dataclasses.replace(base, start=z, end=z + 1, kind=kind, stream=np.arange(n, dtype=np.int8),
                                            stream_names=[str(s) for s in range(n)], stream_kinds=stated,
                                            stream_contexts=contexts)
                    legacy = memcpy._copy_streams(d)[2]
                    tied = _old_legacy_tied(stated, list(busy), n, contexts)
                    want = np.array([s not in busy and bool(tied[s]) for s in range(n)])
                    assert np.array_equal(legacy, want), (stated, contexts, busy, legacy, want)
                    checked += 1
    assert checked == 5 ** n * 3 ** n * 7
