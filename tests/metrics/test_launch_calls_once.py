"""The launch calls of each GPU (``metrics.breakdown.launch_call_spans``: a pass over every launch, the calls and
their submission as disjoint spans) are read once per GPU, not once per ledger painted and once more for the launch
card's split (h37-tidy29: ``own_code_spans`` asked it each time the GPU's ledger was painted, ``launch_split`` again).

``wild/pexsi_a100_pageable_sync`` (PEXSI's selected inversion on an A100, a program with no framework: its own code
between its 849 launches is the ledger's ``other``, its launch calls the launch wait): the spans are asked by both
readers, and the ledger is the one main made."""

from __future__ import annotations

import os
from types import SimpleNamespace

import numpy as np

from tb_gpu_advisor.metrics import breakdown as bd
from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.paths import FIXTURES

RUN = FIXTURES / "wild" / "pexsi_a100_pageable_sync"


def test_each_gpus_launch_calls_are_read_once(monkeypatch):
    (path,) = [p for p in RUN.iterdir() if p.suffix in (".sqlite", ".gz") and "TRUTH" not in p.name]
    passes = []
    read = bd.launch_call_spans
    monkeypatch.setattr(bd, "launch_call_spans", lambda ctx, g, lend=None: passes.append(g.d.gpu) or read(ctx, g, lend))
    h = analyze_session("pexsi", "s", [SimpleNamespace(host="h0", path=str(path), format="nsys",
                                                       size=os.path.getsize(path))]).to_dict()["hosts"][0]
    assert passes and len(passes) == len(set(passes)), passes
    # the ledger main made (SURVEY session 28, h37-ownsplit): launch wait 109.30 ms, other 316.87 ms per step -- of
    # which 0.07 ms are recorded runtime calls outside any op, the host's own work since h37-ledger69
    b = h["breakdown_ms"]
    assert abs(b["launch_wait"] - 109.30) < 0.05 and abs(b["other"] + b["host_compute"] - 316.87) < 0.05, b


def test_a_kept_answer_is_read_again_for_other_launches_or_host_events(monkeypatch):
    """The kept answer is the one read from the GPU's launches and the host events of now: a GPU whose launch column
    was replaced, or a context over other host events, is read again."""
    reads = []
    monkeypatch.setattr(bd, "launch_call_spans", lambda ctx, g, lend=None: reads.append(1) or (np.array([len(reads)]),) * 2)
    g = SimpleNamespace(launch=np.arange(3), waiting_memo=None)
    ctx = SimpleNamespace(trace=SimpleNamespace(ranges=object()), h=object())
    assert [int(bd.launch_calls_of(ctx, g)[0][0]) for _ in range(3)] == [1, 1, 1]
    g.launch = np.arange(3)
    assert int(bd.launch_calls_of(ctx, g)[0][0]) == 2
    ctx.h = object()
    assert int(bd.launch_calls_of(ctx, g)[0][0]) == 3 and len(reads) == 3
