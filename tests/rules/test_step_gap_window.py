"""A "gap after step N" link points at the gap, never past the capture (issue #37, survey h37-survey20).

The real class: Aphelack/efficient-dl-systems ``week02_fast_pipelines/homework/task3/torch_profiler_trace.json``
@7e6cd43 (MIT, kept: ``wild/vit_a4000_pageable_batch``) -- CUDA activities only, so its steps are GPU bursts, and a
guessed step's window runs from its start to the next one's, holding the gap after it.  Main drew the window from the
gap's start to step end + gap: 21.7 - 7581.9 ms in a trace whose last GPU work ends at 3885.5 ms.  Truth from the file
itself: the gap is the GPU's idle stretch between its two bursts, and the capture's GPU work ends where its last
kernel or copy does.  The file's first burst is the tail of an iteration launched before the window, dropped as
partial since h37-left46: the test reads the capture with that tail's launches recorded (``unrecorded.tail_launched``),
its two bursts both kept steps.
"""

from __future__ import annotations

import gzip
import json

from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.intervals import union
from tests.support import unrecorded
from tests.support.paths import FIXTURES

TRACE = FIXTURES / "wild" / "vit_a4000_pageable_batch" / "vit_a4000.1436345.pt.trace.json.gz"
GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}


def _gpu_truth(path) -> tuple[float, float, float]:
    """(longest GPU idle stretch's start, its end, the last GPU work's end), in ms from the trace's first event."""
    events = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
    t0 = min(e["ts"] for e in events if e.get("ph") == "X")
    busy = union([(e["ts"], e["ts"] + e["dur"]) for e in events if e.get("cat") in GPU_CATS])
    idle = max(((busy[i][1], busy[i + 1][0]) for i in range(len(busy) - 1)), key=lambda s: s[1] - s[0])
    return (idle[0] - t0) / 1000, (idle[1] - t0) / 1000, (busy[-1][1] - t0) / 1000


def test_a_guessed_step_s_gap_window_holds_the_gap_and_ends_with_the_capture(tmp_path):
    path = tmp_path / TRACE.name
    unrecorded.tail_launched(unrecorded.load(TRACE), path)
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, "kineto"))
    assert rep.error is None, rep.error
    windows = [w for f in rep.findings if f.rule == "step_gaps" for w in f.windows]
    assert windows, [f.rule for f in rep.findings]
    gap_start, gap_end, last_end = _gpu_truth(path)
    assert gap_end - gap_start > 3000, (gap_start, gap_end)  # the 3.78 s the capture recorded nothing in
    for w in windows:
        assert w.start_ms <= gap_start + 0.001 and w.end_ms >= gap_end - 0.001, (w, gap_start, gap_end)
        assert w.start_ms >= gap_start - 1.0, (w, gap_start)  # from the gap's start, not seconds before the capture
        assert w.end_ms <= last_end + 0.001, (w, last_end)
