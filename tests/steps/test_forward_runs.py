"""A training job whose NVTX ranges mark only its forward's parts reads its iterations from the runs of those ranges
a backward separates (issue #37 class 2, h37-megatron).

The wrong assumption: *a training job's iterations are read from a range around each, or from its launch sequence's
period*.  Megatron-LM's ``--profile --nvtx-ranges`` without pipelining (NVIDIA/Megatron-LM @d98e8a64) pushes
``self_attention``, ``self_attn_bda``, ``mlp``, ``mlp_bda`` once a layer in the forward and no range per iteration;
of 3 iterations or more the period reads them (``repeated_launches``), but a window of 2 held no period of 3 repeats
and read as one pass: 6.299 ms for 2 iterations of 3.319 (h37-forms12b's left).  Now
``steps.forward_runs._forward_run_steps`` reads each iteration from the first range of its forward to the next
forward's, a backward (gradient kernels) and the host's wait between every two; the last, with no next forward to
end it, is dropped as partial.

Truth by construction: ``synthetic.autograd_nvtx`` (``TRUTH``: the host's period, every iteration alike).  Controls:
the 3- and 4-iteration jobs (``repeated_launches``, ``tests/steps/test_last_tiled_step_spill.py``) and
``megatron_shapes`` (``step_end_events``, ``tests/steps/test_two_update_steps_ahead.py``), 2 ranks of 2 iterations
(read from the period before and after), and the reading's own refusals: a forward alone, forwards without the host's
wait between them (micro-batches), runs unlike each other."""

from __future__ import annotations

import numpy as np
import pytest

from synthetic.randjobs import TRUTH, form5_job
from tb_gpu_advisor.steps.forward_runs import _runs, _same_work
from tests.support.random_jobs import check, report_of
from tests.support.report_store import session_report
from tests.support.wild_hosts import wild_sessions


def _read(tmp_path, layers: int, ranks: int = 1):  # noqa: ANN001, ANN202 - pytest's tmp_path; the host's report
    h = report_of(form5_job("fwnvtx", form="megatron", steps=2, layers=layers, ranks=ranks), str(tmp_path)).hosts[0]
    return h, TRUTH[0]["step_ms"]


@pytest.mark.parametrize("layers", [1, 3, 6])
def test_two_megatron_iterations_read_from_their_forwards(tmp_path, layers: int) -> None:  # noqa: ANN001
    """Main: ``whole_capture``, one pass of 2.919 / 6.299 ms for 1 / 3 layers (2 x 1.629 / 3.319)."""
    h, period = _read(tmp_path, layers)
    st = h.steps
    assert (st["source"], st["found"], st["count"]) == ("nvtx_top_range", 2, 1), st
    assert "forward" in st["note"], st["note"]
    assert [d["reason"][:8] for d in st["dropped"]] == ["partial:"], st["dropped"]
    assert h.mean_step_ms() == pytest.approx(period, rel=0.005), (h.mean_step_ms(), period)


def test_two_megatron_iterations_hold_every_report_law() -> None:
    assert check(form5_job("fwnvtx", form="megatron", steps=2, layers=3, ranks=1)) == []


def test_two_ranks_read_as_one(tmp_path) -> None:  # noqa: ANN001
    """Two ranks, each the one-rank job: each rank's forward runs, as one rank's (the busiest GPU's launch period is read
    against its own process's waits since h37-probe47f: the other rank's waits in the middle of its repeats made its
    2 iterations a "period" the one rank's own waits do not make; the mean was the same 3.319 ms)."""
    h, period = _read(tmp_path, 3, ranks=2)
    st = h.steps
    assert (st["source"], st["found"], st["count"]) == ("nvtx_top_range", 2, 1), st
    assert "each rank marks its own steps" in st["note"], st["note"]
    assert h.mean_step_ms() == pytest.approx(period, rel=0.005)


_US = 1_000_000  # ps


def _layers(first: int, n: int, each: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """``n`` ranges of ``each`` us back to back from ``first`` us: one forward's layer ranges (ps)."""
    s = (first + np.arange(n) * each) * _US
    return s.astype(np.int64), (s + (each - 1) * _US).astype(np.int64)


def _forwards(n: int, per: int, at: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    parts = [_layers(a, per) for a in at]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def test_runs_a_backward_and_a_wait_separate_are_iterations() -> None:
    s, e = _forwards(3, 4, (0, 100, 200))
    grad = np.array([50, 60, 150, 160, 250], np.int64) * _US
    waits = np.array([80, 180, 280], np.int64) * _US
    rs, re_ = _runs(s, e, grad, waits)
    assert rs.tolist() == [0, 100 * _US, 200 * _US] and re_.tolist() == [39 * _US, 139 * _US, 239 * _US]


def test_a_forward_alone_is_no_iterations() -> None:
    """Inference, a benchmark's pass: no gradient kernel, one run -- none; nor runs of forwards with no backward."""
    s, e = _forwards(3, 4, (0, 100, 200))
    assert _runs(s, e, np.zeros(0, np.int64), np.array([80, 180], np.int64) * _US) is None


def test_forwards_without_a_wait_between_are_micro_batches() -> None:
    """Gradient accumulation runs a forward and a backward per micro-batch and waits once an iteration: forwards with
    no wait between two of them are no iterations each."""
    s, e = _forwards(4, 4, (0, 100, 200, 300))
    grad = np.array([50, 150, 250, 350], np.int64) * _US
    assert _runs(s, e, grad, np.array([180, 380], np.int64) * _US) is None


def test_a_cut_first_forward_is_left_out_and_unlike_runs_are_none() -> None:
    s, e = _forwards(3, 4, (0, 100, 200))
    grad = np.array([50, 150, 250], np.int64) * _US
    waits = np.array([80, 180, 280], np.int64) * _US
    rs, _ = _runs(s[2:], e[2:], grad, waits)  # the window opened inside the first forward: its last 2 of 4 ranges
    assert rs.tolist() == [100 * _US, 200 * _US]
    keep = np.ones(s.size, bool)
    keep[6] = False  # the second forward with 3 ranges, the third with 4: no forward of one model
    assert _runs(s[keep], e[keep], grad, waits) is None


def test_runs_that_launch_other_work_are_no_iterations() -> None:
    """Each iteration runs its model's one forward: runs launching other kernels (a forward fusion, then a backward's)
    or none are other passes."""
    rs, re_ = np.array([0, 100], np.int64) * _US, np.array([40, 140], np.int64) * _US
    t = np.array([5, 10, 105, 110], np.int64) * _US
    assert _same_work(rs, re_, t, np.array(["gemm", "gelu", "gelu", "gemm"], object))
    assert not _same_work(rs, re_, t, np.array(["gemm", "gelu", "gemm_dgrad", "gemm"], object))
    assert not _same_work(rs, re_, t[:2], np.array(["gemm", "gelu"], object))


def test_nvfusers_forward_and_backward_fusions_are_one_pass() -> None:
    """``nvfuser_h200_first_call`` (Thunder + nvFuser's first call: a forward fusion and a backward fusion, each inside
    ``FusionCache::get`` / ``FusionDefinition Definition`` / ``runFusionWithInputs``, a gradient kernel and a sync
    between): one pass, as on main -- before ``_same_work`` the forward runs read it as 2 steps of 429.5 ms."""
    
    s = next(s for s in wild_sessions() if s.run == "nvfuser_h200_first_call")
    st = session_report(s).to_dict()["hosts"][0]["steps"]
    assert (st["source"], st["count"]) == ("whole_capture", 1), st
