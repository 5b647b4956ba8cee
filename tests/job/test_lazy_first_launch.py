"""A one-pass program's single launch that loads its kernel's module (CUDA's lazy loading) is a one-time cost
(survey h37-survey12).

BrianLa0616/mandelbrot's ``profile_output.sqlite`` (an A100, read locally, no licence: not kept) holds one
``cudaLaunchKernel`` of 75.7 ms with the GPU idle (``cuModuleGetLoadingMode`` recorded: lazy loading), then its one
20.2 ms kernel.  On main the launch was no one-time cost: the typical launch was the median of the launches under the
1 ms cut, or of all launches where none is -- so a lone slow launch set its own cut 100x above itself -- and the report
called the 75.7 ms "the host's own code ... no runtime call covers".  A launch takes microseconds, so where no launch
is quick the absolute cut alone decides.  The export is ``synthetic.nsysexport.write_lazy_first_launch``'s, its
one-time launch known by construction."""

from __future__ import annotations

import pytest

from synthetic.nsysexport import write_lazy_first_launch
from tb_gpu_advisor.discover.logdir import discover
from tests.support.report_store import session_report


def _host(tmp_path, **kw):
    truth = write_lazy_first_launch(str(tmp_path / "pass.sqlite"), **kw)
    (s,) = discover(str(tmp_path))
    return truth, session_report(s).to_dict()["hosts"][0]


def test_a_lone_slow_first_launch_is_a_one_time_cost(tmp_path):
    truth, host = _host(tmp_path)
    cold = next(f for f in host["findings"] if f["rule"] == "cold_start")
    assert f"1 kernel launch of {truth['one_time_launch_ms']:.1f} ms with the GPU idle" in cold["summary"], cold["summary"]
    assert "median launch" not in cold["summary"]  # no quick launch to take a typical time from
    assert cold["saving"]["ms_per_step"] == pytest.approx(truth["one_time_launch_ms"], rel=0.02)
    assert host["findings"][0]["rule"] == "cold_start"


def test_a_quick_lone_launch_is_no_one_time_cost(tmp_path):
    truth, host = _host(tmp_path, launch_ms=0.02)
    assert truth["one_time_launch_ms"] == 0.0
    assert not any("kernel launch of" in f["summary"] for f in host["findings"] if f["rule"] == "cold_start")
