"""Where the capture holds no GPU record, an op's first call far slower than every later call of the same op is a
one-time cost: the job's phase is no steady state.

Survey h37-survey70 (its Left 3): nachewigkeit/CropDefender's ``resnet_profile.json`` (MIT, kept as
``wild/legacy_list_cudnn_convs``), ``torch.autograd.profiler``'s legacy list of one 3.46 s pass whose GPU side was
not recorded: its first ``aten::cudnn_convolution`` took 1.12 s against a median of 322 us for its 49 later calls
(cuDNN's algorithm search), the first ``aten::inverse`` 840 ms against 474 us, the first ``aten::bmm`` 649 ms against
40 us.  Main read "steady: no one-time costs (module loading, library start-up, compilation) in the capture": every
one-time reading it had goes by runtime calls and the GPU's idle, neither of which such a capture holds.  The
generator's legacy list (``synthetic.torchtrace.write_legacy_list(first_calls=)``) gives the shape with the truth by
construction, and a control whose first call is only a few times its later ones (a larger first batch).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import host_metrics

FIXTURE = Path(__file__).parents[1] / "fixtures" / "wild" / "legacy_list_cudnn_convs" / "resnet_profile.json.gz"


def _first_calls_by_hand() -> dict[str, tuple[float, float]]:
    """The fixture's ops read by hand from the raw list: name -> (first call, median of the later calls), us."""
    events = [e for e in json.load(gzip.open(FIXTURE)) if e.get("ph") == "X"]
    by: dict[str, list[dict]] = {}
    for e in sorted(events, key=lambda e: e["ts"]):
        by.setdefault(e["name"], []).append(e)
    return {n: (calls[0]["dur"], float(np.median([c["dur"] for c in calls[1:]])))
            for n, calls in by.items() if len(calls) >= 3}


def test_the_real_legacy_lists_first_calls_are_one_time_costs():
    """Main: phase "steady", 0 ms of one-time costs.  Here warm-up: the three first calls named, their time at least
    the cuDNN search's and inverse's and bmm's first calls together (they do not nest: one after another)."""
    truth = _first_calls_by_hand()
    conv, inv, bmm = (truth[n] for n in ("aten::cudnn_convolution", "aten::inverse", "aten::bmm"))
    assert conv[0] > 1000 * conv[1] and inv[0] > 1000 * inv[1]  # the truth: orders of magnitude over the later calls
    m = host_metrics(read_trace(str(FIXTURE)))
    assert not m.gpus
    ph = m.job.phase
    assert ph.phase == "warm-up", ph.evidence
    for name in ("aten::cudnn_convolution", "aten::_inverse_helper", "aten::bmm"):
        assert f"`{name}`" in ph.evidence, ph.evidence
    assert ph.total_ms >= (conv[0] + inv[0] + bmm[0]) / 1000 * 0.999


def test_a_first_linear_that_searches_its_algorithm_is_a_one_time_cost(tmp_path):
    """By construction: 4 iterations of the legacy list, the first ``aten::linear`` 400 ms (110 us after): warm-up,
    its one-time cost that first call's time."""
    path = tmp_path / "rank0.pt.trace.json"
    truth = tt.write_legacy_list(str(path), steps=4, marks=False, first_calls={"aten::linear": 400_000.0})
    ph = host_metrics(read_trace(str(path))).job.phase
    assert ph.phase == "warm-up" and "`aten::linear`" in ph.evidence, ph.evidence
    assert ph.total_ms == pytest.approx(truth["first_calls_us"]["aten::linear"] / 1000, rel=1e-6)


def test_the_marked_first_step_holding_it_is_dropped_as_warm_up(tmp_path):
    """The same with ``ProfilerStep#N`` marks (``torch.profiler`` on a build without Kineto): the first step holds
    the one-time cost and is dropped as warm-up, the mean the steady steps' (main: all 4 kept, the mean 100 ms
    higher)."""
    path = tmp_path / "rank0.pt.trace.json"
    truth = tt.write_legacy_list(str(path), steps=4, marks=True, first_calls={"aten::linear": 400_000.0})
    m = host_metrics(read_trace(str(path)))
    assert m.steps.count == truth["steps"] - 1
    assert [d.reason.split(":")[0] for d in m.steps.dropped] == ["warm-up"]
    assert m.headline.avg_step_ms == pytest.approx(truth["step_ms"], rel=0.01)


def test_a_first_call_a_few_times_its_later_ones_is_steady(tmp_path):
    """The control: a first ``aten::linear`` a few times the later ones (a larger first batch), under
    ``job.first_call_factor``: no one-time cost, steady -- here and on main."""
    path = tmp_path / "rank0.pt.trace.json"
    later = dict(tt.UNRECORDED_STEP_OPS)["aten::linear"]
    assert 3 < T("job.first_call_factor")
    tt.write_legacy_list(str(path), steps=4, marks=False, first_calls={"aten::linear": later * 3})
    ph = host_metrics(read_trace(str(path))).job.phase
    assert ph.phase == "steady" and ph.total_ms == 0.0, ph.evidence
