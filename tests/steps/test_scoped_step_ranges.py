"""A range named like a step under a scope path (``jax/iteration_0``) marks a step (issue #37 item 6, h37-huntjax64).

The wrong assumption (``frameworks.nvtx.is_step_name``): *a step's range is named like a step from its first
character*.  A benchmark that times several variants names each turn after the variant: lutetjeff/cs521-mp2's
``profile_myconv.py`` wraps each of 3 calls of a jitted JAX conv in ``record_function(f"{name}/iteration_{i}")``
under ``torch.profiler`` (``gpu/traces/jax.json``, a Quadro RTX 4000).  Read whole, ``jax/iteration_0`` was no step
name: the report found "no step markers or step spans in the capture", took the GPU's period for steps (217 us) and
told a critical "Gaps between steps ... host work (Python, .item() and other syncs)" with PyTorch's ``.item()`` fix.
Now a scope path of plain words before a numbered step name is read as the loop's prefix.

Truth: the generated run (:func:`synthetic.torchtrace.write_scoped_iteration_ranges`, the ranges by construction) and
the real trace read by hand (no licence: kept in ``/work/wild64/huntjax64/lutetjeff`` only, the test skips
elsewhere): iteration 0 2,044.9 us (1,742.4 us of it the profiler's own ``Activity Buffer Request``), iteration 1
167.6 us, iteration 2 3,602.2 us (3.50 ms of it no recorded host event after the last launch); 3 kernels (16-17 us)
a turn.
"""

from __future__ import annotations

import os

import pytest

from synthetic.torchtrace import write_scoped_iteration_ranges
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.frameworks import nvtx
from tb_gpu_advisor.runtime.pipeline import analyze_session

_REAL = "/work/wild64/huntjax64/lutetjeff/jax.json"


@pytest.mark.parametrize("name", ["jax/iteration_0", "pytorch/iteration_12", "bench/conv2d/step_3",
                                  "inductor/iter 4", "train/step_7"])
def test_a_numbered_step_name_under_a_scope_path_is_a_step(name):
    assert nvtx.is_step_name(name), name  # main: False for each


@pytest.mark.parametrize("name", ["optimizer/step_1", "lr_scheduler/step_2", "model/step", "jax/conv_3",
                                  "a b/step_1", "warmup/iteration_0", "ema/decode_step_3"])
def test_scoped_names_that_are_no_step_stay_none(name):
    """Controls (none a step on main either): an optimizer's or a scheduler's step, an unnumbered or non-step last
    part, a prefix that is a phrase, a warm-up, a bare step after other words."""
    assert not nvtx.is_step_name(name), name


def _report(root):
    """The session of the run at ``root`` itself (the local folder also holds the same job's ``cuda/`` run)."""
    (s,) = [s for s in discover(str(root)) if s.run == "."]
    return analyze_session(s.run, s.session, s.hosts)


@pytest.mark.parametrize("mode", ["sync_item", "tiny_ops"])
def test_generated_scoped_iteration_ranges_are_the_steps(tmp_path, mode):
    """Main: the steps came from the optimizer's steps (``sync_item``) or the GPU's work, "no step markers or step
    spans in the capture", medium confidence; now the program's 8 ranges, high confidence."""
    write_scoped_iteration_ranges(str(tmp_path), mode=mode, steps=8)
    host = _report(tmp_path / "scoped_iterations").hosts[0]
    steps = host.steps
    assert steps["source"] == "nvtx_range" and steps["found"] == 8 and steps["confidence"] == "high", steps
    assert "jax/iteration_" in steps["note"] and "no step markers" not in steps["note"], steps["note"]


@pytest.mark.skipif(not os.path.isfile(_REAL), reason="lutetjeff/cs521-mp2 gpu/traces/jax.json kept locally only")
def test_the_real_jax_conv_under_torch_profiler_steps_by_its_own_ranges():
    """lutetjeff/cs521-mp2 ``gpu/traces/jax.json`` @0d6aeaf2: the 3 ranges are the steps; the first is dropped for the
    profiler's own buffer requests (1.74 ms), the two kept average (167.6 + 3,602.2) / 2 us.  Main: 3 steps of the GPU's
    period, a 217 us step and a critical between-step gap finding with PyTorch's ``.item()`` fix."""
    root = os.path.dirname(_REAL)
    report = _report(root)
    host = report.hosts[0]
    steps = host.steps
    assert steps["source"] == "nvtx_range" and steps["found"] == 3 and steps["count"] == 2, steps
    assert "jax/iteration_0" in steps["note"] and "profiler's own work" in steps["note"], steps["note"]
    (share,) = [m for m in host.headline if m.id == "device_step_share"]
    assert share.detail["avg_step_ms"] == pytest.approx((0.167551 + 3.602239) / 2, rel=0.02), share
    assert not [f for f in report.findings if f.rule == "step_gaps" and f.severity == "critical"]
