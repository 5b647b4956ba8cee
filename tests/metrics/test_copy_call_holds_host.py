"""Whether a copy's call held the host asks the copy's kind too (h37-copydir31; issue #37 class 3: a copy that
blocks the host is the copy's cost).

Each reader marked a copy synchronous by its call's name alone (``devices.copy_call_sync``: not ``...Async``), so a
``cudaMemset`` read as holding the host ("sync share 100%" on the copies table's fill row).  CUDA's API
synchronization behaviour says otherwise for the kinds that move no host memory: the memset functions "are
asynchronous with respect to the host except when the target memory is pinned host memory", a device-to-device
``cudaMemcpy`` performs "no host-side synchronization", ``cudaMemcpyPeer`` is "asynchronous with respect to the
host".  The wrong assumption: *a copy call not named Async blocks the host* -- only where the copy moves host memory.
One home now: ``devices.copies_call_sync`` (the call and the event's kind), asked by the Kineto and Nsight readers.

Truth read by hand off the kept RTX 6000 export ``wild/mordred_rtx6000_hashjoin`` (SQL, before the Advisor ran:
``CUPTI_ACTIVITY_KIND_MEMSET`` joined to ``CUPTI_ACTIVITY_KIND_RUNTIME`` by correlation id): 16 fills, each made by a
``cudaMemset_v3020``; 15 of the calls returned before their fill ended.  Its ``cudaMemcpy`` calls, controls: all 24
DtoH calls returned after their copy ended (held), and 162 of the 164 HtoD calls (pageable: the call returns once
the buffer is staged) returned before.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from synthetic.nsysexport import write_filled_frontier
from tb_gpu_advisor import devices
from tb_gpu_advisor.discover.logdir import discover
from tests.support.report_store import session_report

WILD = Path(__file__).resolve().parents[1] / "fixtures" / "wild"


def _rows(folder: Path) -> dict[str, dict]:
    (s,) = discover(str(folder))
    (h,) = [h for h in session_report(s).to_dict()["hosts"] if not h.get("error")]
    t = h["memcpy"]
    return {r[0]: dict(zip(t["columns"], r)) for r in t["rows"]}


def test_a_real_cudamemset_does_not_hold_the_host():
    rows = _rows(WILD / "mordred_rtx6000_hashjoin")
    assert rows["memset"]["sync/step"] == 0.0, rows["memset"]  # main: 1.83, every fill "synchronous"
    assert rows["d2h"]["sync share"] == 1.0 and rows["h2d"]["sync share"] == 1.0  # cudaMemcpy to/from the host: held


def test_a_generated_cudamemset_does_not_hold_the_host(tmp_path):
    write_filled_frontier(str(tmp_path / "pass.sqlite"))
    rows = _rows(tmp_path)
    assert rows["memset"]["count/step"] > 0 and rows["memset"]["sync/step"] == 0.0, rows  # main: sync share 1.0
    assert rows["h2d"]["sync share"] == 1.0 and rows["d2h"]["sync share"] == 1.0, rows


@pytest.mark.parametrize("call,kind,want", [
    ("cudaMemcpy", devices.KIND_D2H, 1), ("cudaMemcpy", devices.KIND_H2D, 1), ("cudaMemcpy", devices.KIND_OTHER_COPY, 1),
    ("cudaMemcpy", devices.KIND_D2D, 0), ("cudaMemcpyPeer", devices.KIND_D2D, 0), ("cudaMemset", devices.KIND_MEMSET, 0),
    ("cudaMemcpyAsync", devices.KIND_D2H, 0), ("cudaLaunchKernel", devices.KIND_KERNEL, -1),
    # HIP's rule is HIP's (amd.copy_call_sync, asked with the kind as CUDA's is): ROCm's tracers record a copy to pinned
    # host memory device-to-device, and such a call holds the host (measured, h37-words32:
    # tests/metrics/test_hip_copy_call_kind.py), so no recorded kind says a HIP call returned at once
    ("hipMemcpy", devices.KIND_D2D, 1), ("hipMemcpy", devices.KIND_D2H, 1),
])
def test_copies_call_sync_asks_the_call_and_the_kind(call, kind, want):
    names = [call, "unused"]
    got = devices.copies_call_sync(names, np.array([0, -1]), np.array([kind, devices.KIND_H2D], np.int8))
    assert got.tolist() == [want, -1]
