"""Each Kineto file's whole decodes (``adapter.parse_trace`` calls) during a test, counted, never timed: how often an
analysis reads a file (h37-reads60; ``benchmarks/reads_once.py`` measures the same with its wall time)."""

from __future__ import annotations

import collections
from pathlib import Path

from tb_gpu_advisor.formats.kineto import adapter


def count_decodes(monkeypatch) -> collections.Counter:  # noqa: ANN001 - pytest's monkeypatch
    """File name -> its whole decodes from here on (to the test's end)."""
    counts: collections.Counter = collections.Counter()
    decode = adapter.parse_trace

    def counted(src, **kw):  # noqa: ANN001, ANN003, ANN202
        counts[Path(kw.get("name") or src).name] += 1
        return decode(src, **kw)

    monkeypatch.setattr(adapter, "parse_trace", counted)
    return counts
