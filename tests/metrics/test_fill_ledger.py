"""A memset is a fill in the ledger too (h37-fill30; issue #37 class 3, "each wait belongs to its cause").

h37-survey58 made the copies finding call a memset what it is -- the GPU writing its own memory, no transfer, with a
fill fix of its own -- while the ledger still booked a memset's time as ``memcpy_d2d``: the breakdown, the step table,
the chart and the markdown showed a device-to-device copy where the finding named a fill.  The wrong assumption: *a
memset is a device-to-device copy* (``devices.nvidia.COPY_KINDS`` gave it ``KIND_D2D``).  Now a memset has its own kind
(``devices.KIND_MEMSET``) and ledger category (``memset``); every reader of the categories follows.

Truth read by hand off the kept traces (raw events, before the Advisor ran):

* ``wild/mordred_rtx6000_hashjoin`` (Nsight export): ``CUPTI_ACTIVITY_KIND_MEMSET`` 16 rows, 13,599 ns in all;
  ``CUPTI_ACTIVITY_KIND_MEMCPY`` 164 rows of ``copyKind`` 1 (HtoD) and 24 of ``copyKind`` 2 (DtoH), none DtoD.
* ``wild/hf_qwen_h100`` (Kineto): 241 ``gpu_memset`` events ``Memset (Device)``, 212.234 us in all; one
  ``gpu_memcpy``, ``Memcpy DtoH (Device -> Pinned)``; no device-to-device copy.

Neither file holds a device-to-device copy, so the ledger books none; its fills are at most the memsets' own time.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic.nsysexport import write_filled_frontier
from synthetic.torchtrace import write_filled_steps
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.model.schema import Report
from tests.support.properties import copy_own_problems
from tests.support.report_store import session_report

WILD = Path(__file__).resolve().parents[1] / "fixtures" / "wild"
#: (run, the memsets' own GPU time in the whole file in ms, read by hand: see the module doc)
REAL = [("mordred_rtx6000_hashjoin", 13_599 / 1e6), ("hf_qwen_h100", 212.234 / 1e3)]


def _report(folder: str | Path) -> Report:
    (s,) = discover(str(folder))
    return session_report(s)


def _ledgers(h) -> list[dict]:  # noqa: ANN001 - a HostReport
    """Every ledger of a host: the host's mean step, each GPU's and each step row's."""
    return [h.breakdown_ms] + [g.breakdown for g in h.gpus] + [r.breakdown for r in h.step_rows]


@pytest.mark.parametrize("run,fill_ms", REAL, ids=[r for r, _ in REAL])
def test_a_real_capture_without_device_copies_books_its_memsets_as_fills(run, fill_ms):
    (h,) = [h for h in _report(WILD / run).hosts if h.error is None]
    for bd in _ledgers(h):
        assert bd["memcpy_d2d"] == 0.0, bd  # main: the memsets' time, as a device-to-device copy
    kept = h.capture["steps_kept"]
    assert 0.0 < h.breakdown_ms["memset"] and h.breakdown_ms["memset"] * kept <= fill_ms + 1e-6, h.breakdown_ms
    assert not copy_own_problems(h)


@pytest.mark.parametrize("copy_us", [0.0, 120.0])
def test_kineto_steps_book_a_fill_and_a_device_copy_apart(tmp_path, copy_us):
    truth = write_filled_steps(str(tmp_path / "fill.pt.trace.json"), copy_us=copy_us)
    (h,) = _report(tmp_path).hosts
    bd = h.breakdown_ms
    assert bd["memset"] == pytest.approx(truth["fill_ms"], abs=1e-3), bd
    assert bd["memcpy_d2d"] == pytest.approx(truth["copy_ms"], abs=1e-3), bd
    assert not copy_own_problems(h)


def test_nsight_fill_is_booked_as_a_fill(tmp_path):
    truth = write_filled_frontier(str(tmp_path / "pass.sqlite"))
    (h,) = _report(tmp_path).hosts
    for bd in _ledgers(h):
        assert bd["memcpy_d2d"] == 0.0, bd
    assert h.breakdown_ms["memset"] == pytest.approx(truth["fill_ms"], abs=0.01), h.breakdown_ms


def test_the_copy_own_law_catches_a_fill_booked_as_a_copy(tmp_path):
    """The law can fail: the synthetic steps' report with its fill moved back into ``memcpy_d2d`` (main's ledger)."""
    write_filled_steps(str(tmp_path / "fill.pt.trace.json"))
    (h,) = _report(tmp_path).hosts
    assert not copy_own_problems(h)
    h.breakdown_ms["memcpy_d2d"] += h.breakdown_ms.pop("memset")
    (line,) = copy_own_problems(h)
    assert line.startswith("copy-own:") and "memcpy_d2d" in line
