"""An unnamed fetch ends at the batch's put (h37-probe43t, issue #37 class 4: "the input wait is the input
pipeline's own time; other host time before the first op is named apart").

A tiny jitted JAX loop over a NumPy iterator, ``batch = jax.device_put(next(it))``, then untraced Python of another
kind (logging), then the jitted step: no range names the fetch, but the loop's own thread records the batch's put
(``shard_args`` > ``BufferFromHostBuffer(f32[64,256])``).  The wrong assumption: *with no pipeline event, the whole
time from the step's marker to its first dispatch stands for an untraced loader*.  A batch is put once it is made:
the untraced time after its put is no fetch.  Main booked it as input (the 1 ms step: 686 us of input where the fetch
and its put are 534 us; the same loop with its fetch in a range read 531 us and named the 153 us apart).  Truth by
construction (``synthetic.jaxcapture.fetch_loop`` with ``name=None``); no kept real capture is such a loop.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import jaxcapture as jc
from synthetic.xla_kernels import TINY_EW, XlaKernel
from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import host_metrics

STEPS = 24
PS_PER_MS = 1e9


def _loop(root: Path, name: str | None, fetch_us: float, other_us: float, array_args: tuple = ()):
    """A small MLP's jitted step (10 tiny kernels, 60 us of GPU) fed by a fetch; the metrics and a middle step's
    (marker start, the put's end, the dispatch), host ps."""
    cap = jc.JaxCapture(step_annotation=True, command_buffers=True, jitter=0.0)
    kernels = [XlaKernel(f"fusion_{i}", f"fusion_{i}", "jit(train_step)/add", 6.0, TINY_EW, "fp32", gap_us=0.0)
               for i in range(10)]
    cap.add_hlo(jc.mlp_hlo(cap.module, kernels))
    spans = jc.fetch_loop(cap, kernels, STEPS, name, fetch_us, other_us, put_bytes=64 * 256 * 4, shape="f32[64,256]",
                          array_args=array_args)
    (path,) = jc.JaxScenario("tiny", cap.finish(), cap.truth("tiny", "tiny", "trace_train")).write(root)
    return host_metrics(read_trace(str(path))), spans[len(spans) // 2]


@pytest.mark.parametrize("fetch_us, other_us", [(300.0, 150.0), (4000.0, 2000.0)], ids=["tiny step", "slow fetch"])
def test_the_untraced_time_after_the_batchs_put_is_no_input(tmp_path: Path, fetch_us: float, other_us: float) -> None:
    m, (start, put, dispatch) = _loop(tmp_path / "unnamed", None, fetch_us, other_us)
    fetch_ms, other_ms = (put - start) / PS_PER_MS, (dispatch - put) / PS_PER_MS
    assert m.input.source == "before_first_op"
    # main: 0.686 ms (tiny step) where the fetch and its put are 0.534 ms: the logging after the put counted as input
    assert fetch_ms - 0.01 <= m.breakdown.input_wait <= fetch_ms + 0.005
    # named apart (main: 0)
    assert other_ms - 0.01 <= m.input.pre_op_ms_per_step <= other_ms + 0.01
    # a part never holds what another part of the same lead holds
    assert m.breakdown.input_wait + m.input.pre_op_ms_per_step <= fetch_ms + other_ms + 0.01


def test_the_unnamed_fetch_reads_as_the_named_one(tmp_path: Path) -> None:
    """The same loop with its fetch in a range (``with jax.profiler.TraceAnnotation("get_batch")``) read right on
    main: naming the fetch changes where the wait is found, not how long it is."""
    unnamed, _ = _loop(tmp_path / "unnamed", None, 300.0, 150.0)
    named, _ = _loop(tmp_path / "named", "get_batch", 300.0, 150.0)
    assert named.input.source == "pipeline"
    assert unnamed.breakdown.input_wait == pytest.approx(named.breakdown.input_wait, abs=0.01)
    assert unnamed.input.pre_op_ms_per_step == pytest.approx(named.input.pre_op_ms_per_step, abs=0.01)


def test_control_an_array_handed_to_the_call_keeps_the_lead_whole(tmp_path: Path) -> None:
    """The loop makes a NumPy mask after the put and hands it straight to the jitted call (``step(state, batch,
    np_mask)``: its ``BufferFromHostBuffer(bool[64,256])`` inside the dispatch): the time after the put is making
    that input -- the lead stays whole, as main read it (no other host time named)."""
    m, (start, put, dispatch) = _loop(tmp_path, None, 300.0, 150.0, array_args=(("bool[64,256]", 64 * 256),))
    assert m.input.pre_op_ms_per_step < 0.01
    assert m.breakdown.input_wait >= (dispatch - start) / PS_PER_MS - 0.01
