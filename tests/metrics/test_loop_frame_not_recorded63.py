"""A loop's own Python frame records no host work of its own (h37-huntkin63; issue #37 deliverable 3).

Truth by construction: ``synthetic.torchtrace.write_pageable_upload_bound(after_copy_us=1500, loop_frame=...)`` -- a
loop whose step uploads its batch from pageable memory, then runs 1.5 ms of host code no event records (the real
RTX 3080 loop of ``JonathanHourany/pytorch-sandbox`` frees its worker-loaded batch there, ~2 ms a step), then its
work.  ``loop_frame``: ``with_stack=True``'s frame of the training function (``train.py(40): main``) recorded around
every step, as the real trace's ``main`` and ``<module>`` frames are.  That frame says that the loop runs, not what
the host does inside it: the report is the same with and without it.  On BASE the frame counted as recorded host
work, so the untraced 1.5 ms became the copy's idle (GPU-bound loop: ``excessive_memcpy`` critical, 1.77 ms, where
the copy's own cost is 0.42 ms) or Python work (host-bound loop: the host-bound finding 3.76 ms, 0.76 ms of it the
untraced code, told to compile the model).
"""

from __future__ import annotations

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.rules import evaluate
from tb_gpu_advisor.runtime.pipeline import host_metrics

UNTRACED_US = 1500.0


def _read(tmp_path, bound: str, frame: bool):
    info = tt.write_pageable_upload_bound(str(tmp_path / f"{bound}_{int(frame)}"), bound=bound,
                                          after_copy_us=UNTRACED_US, loop_frame=frame)
    (path,) = info["paths"]
    m = host_metrics(read_trace(path))
    return m, evaluate(m)


def _savings(findings) -> dict[str, float]:
    return {f.id.split(":")[0] + ("#" + f.id.split("#")[1] if "#" in f.id else ""): round(f.saving.ms_per_step, 3)
            for f in findings if f.saving is not None}


@pytest.mark.parametrize("bound", ["gpu", "host"])
def test_the_loop_frame_changes_nothing(tmp_path, bound):
    """Fails on BASE for both loops (the GPU-bound copy's idle 1.365 ms with the frame, 0.015 without; the host-bound
    ledger's Python work 4.5 ms with it, 3.0 without)."""
    bare, bare_f = _read(tmp_path, bound, False)
    framed, framed_f = _read(tmp_path, bound, True)
    assert framed.syncs.copy_idle_ms_per_step == pytest.approx(bare.syncs.copy_idle_ms_per_step, abs=0.02)
    assert framed.syncs.unrecorded_ms_per_step == pytest.approx(bare.syncs.unrecorded_ms_per_step, abs=0.02)
    assert framed.breakdown.host_compute == pytest.approx(bare.breakdown.host_compute, abs=0.02)
    assert framed.breakdown.other == pytest.approx(bare.breakdown.other, abs=0.02)
    assert _savings(framed_f) == pytest.approx(_savings(bare_f), abs=0.02)


def test_the_untraced_code_is_neither_the_copys_nor_python_work(tmp_path):
    """Fails on BASE: with the loop's frame the GPU-bound copy claimed the untraced 1.5 ms (saving 1.77 ms) and the
    ledger booked it as the host's Python work; the copy's truth is its own 400 us in the stream and the few us of
    idle after it, the untraced time the ledger's ``other``."""
    m, findings = _read(tmp_path, "gpu", True)
    assert m.syncs.copy_idle_ms_per_step < 0.1
    assert m.syncs.unrecorded_ms_per_step > 0.85 * UNTRACED_US / 1000
    assert m.breakdown.other > 0.95 * UNTRACED_US / 1000
    assert m.breakdown.host_compute < 0.1
    (copy,) = [f for f in findings if f.rule == "excessive_memcpy"]
    assert copy.saving.ms_per_step < 0.5
