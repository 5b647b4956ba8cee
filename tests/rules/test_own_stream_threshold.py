"""The share of copy time on streams of their own above which ``excessive_memcpy`` reads the copies as on a stream of
their own has one home, the thresholds table (``excessive_memcpy.own_stream_share``; docs/rules.md lists it), not an
inline 0.5 in the rule (h37-copystream61 wrote one; one home for thresholds).

Truth by construction: ``synthetic.torchtrace.write_pageable_upload_bound(out, "gpu", fix="waited")`` -- the pinned
upload on a stream of its own (all its copy time: share 1.0) that the kernels wait for.  At the table's value the first
fix issues the copy a step ahead; with the threshold raised past 1.0 no share reads as a stream of their own, and the
first fix is the side-stream copy again: the rule asks the table.  Fails on base (no such threshold: ``override``
raises ``KeyError``).
"""

from __future__ import annotations

from pathlib import Path

from synthetic import torchtrace as tt
from tb_gpu_advisor.common.thresholds import T, THRESHOLDS, override
from tb_gpu_advisor.discover.logdir import discover
from tests.support.report_store import session_report


def _first_fix(d: Path) -> str:
    (s,) = discover(str(d))
    f = next(f for f in session_report(s).findings if f.rule == "excessive_memcpy")
    return f.actions[0].text


def test_the_own_stream_reading_follows_the_thresholds_table(tmp_path: Path) -> None:
    assert THRESHOLDS["excessive_memcpy.own_stream_share"].unit == "share"
    assert T("excessive_memcpy.own_stream_share") == 0.5
    tt.write_pageable_upload_bound(str(tmp_path), "gpu", fix="waited")
    assert "already run on a stream of their own" in _first_fix(tmp_path)
    with override(**{"excessive_memcpy.own_stream_share": 1.01}):
        moved = _first_fix(tmp_path)
    assert "already run on a stream of their own" not in moved and "stream of its own" in moved, moved
