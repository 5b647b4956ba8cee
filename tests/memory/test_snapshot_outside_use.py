"""The GPU memory a capacity record shows in use outside the process's allocator (issue #37 class 5).

Wrong assumption corrected (h37-capcache34): a snapshot's capacity record says only the GPU's size.  It says more:
``torch.cuda.mem_get_info()`` gives (free, total) beside the dump, so total - free - the allocator's reserved bytes at
the dump is what the CUDA context, NCCL's and other libraries' own buffers and other processes hold -- bytes on the GPU
at the peak too.  Main read ``free_bytes`` and dropped it: a peak at 80% of the GPU beside 15% held outside (95% of the
GPU in use) was "not near capacity", and the room to grow counted bytes another user holds.  The truth is by
construction (``synthetic.memsnapshot.free_beside``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.formats.snapshot.reader import read_trace
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host

GiB = 1 << 30


def _snapshot(tmp_path: Path) -> tuple[Path, dict, int]:
    """The forward-only scenario written out, with its reserved peak (what a total is chosen against)."""
    doc = ms.SCENARIOS["forward_autograd"]().doc
    path = Path(ms.write(str(tmp_path / "fwd.pickle"), doc))
    return path, doc, int(read_trace(str(path)).memory[0].reserved.max())


def _report(path: Path):
    rep = analyze_host(HostFile("fwd", str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    return rep


def test_bytes_outside_the_allocator_put_a_peak_near_capacity(tmp_path: Path):
    """The peak reserves 80% of the GPU and 15% of it is in use outside the allocator: 95% of the GPU is in use at the
    peak, so memory_near_capacity fires at 0.95 and says what the outside bytes are (main: 0.80, no finding -- free
    was read and dropped).  The report keeps the bytes (``outside_bytes``, the truth)."""
    path, doc, peak = _snapshot(tmp_path)
    total = int(peak / 0.80)
    outside = int(0.15 * total)
    ms.write_capacity(str(path), total, ms.free_beside(doc, total, outside))
    rep = _report(path)
    assert rep.gpus[0].memory["outside_bytes"] == outside
    (f,) = [f for f in rep.findings if f.rule == "memory_near_capacity"]
    assert f.metric.value == pytest.approx(0.95, abs=0.005)
    assert "more in use outside the allocator" in f.summary, f.summary


def test_control_nothing_outside_the_allocator_leaves_the_peak_as_it_was(tmp_path: Path):
    """The same peak with nothing outside (free = total - reserved): 80% in use, no near-capacity finding, the
    outside bytes 0 and no words of them."""
    path, doc, peak = _snapshot(tmp_path)
    total = int(peak / 0.80)
    ms.write_capacity(str(path), total, ms.free_beside(doc, total, 0))
    rep = _report(path)
    assert rep.gpus[0].memory["outside_bytes"] == 0
    assert "memory_near_capacity" not in {f.rule for f in rep.findings}
    assert all("outside the allocator" not in f.summary for f in rep.findings)


def test_the_room_to_grow_leaves_the_outside_bytes_out(tmp_path: Path):
    """batch_size_headroom's "could grow about N x": main planned for the usable 90% of the total whatever the record
    measured outside (4.18x with nothing outside and with a fifth of the GPU another's alike); here the room is the
    total less what is measured outside: (total - outside - held) / the step's own bytes, by construction."""
    path, doc, peak = _snapshot(tmp_path)
    total = 4 * peak

    def factor(outside: int) -> tuple[float, dict]:
        ms.write_capacity(str(path), total, ms.free_beside(doc, total, outside))
        (f,) = [f for f in _report(path).findings if f.rule == "batch_size_headroom"]
        return f.metric.detail["growth_factor"], f.metric.detail

    for outside in (0, int(0.20 * total)):
        got, d = factor(outside)
        truth = (total - outside - d["held_bytes"]) / (d["peak_allocated_bytes"] - d["held_bytes"])
        assert got == pytest.approx(truth, abs=0.01), (outside, got, truth)
    assert factor(int(0.20 * total))[0] < factor(0)[0]


def test_a_record_taken_at_another_moment_says_so_and_counts_nothing_outside(tmp_path: Path):
    """free + reserved over the total: the record was taken when the allocator held less (before the dump's reserve
    grew), so what lay outside is unknown -- a note, no ``outside_bytes``, the capacity still the total's."""
    path, doc, peak = _snapshot(tmp_path)
    total = int(peak / 0.80)
    ms.write_capacity(str(path), total, ms.free_beside(doc, total, 0) + GiB)
    rep = _report(path)
    g = rep.gpus[0].memory
    assert g["capacity_bytes"] == total and "outside_bytes" not in g
    assert any("taken at another moment" in n for n in rep.capture["notes"]), rep.capture["notes"]
