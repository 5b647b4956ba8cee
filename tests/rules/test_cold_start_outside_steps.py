"""One-time costs that lie outside every kept step are a capture note, not a step's cost (issue #37, h37-left23).

The real case (amacharla15/gpu-profiling-cuda-kernels ``profiling/results/resnet50_nsys.sqlite`` @3f61024, no
licence, so not kept: ``tests/fixtures/wild/SURVEY.md``): captured from process start, 15% of its window is start-up,
all before the 5 timed passes that are its steps.  Main said nothing of it (``cold_start`` grades only the start-up
inside the steps, and the window-only warning waits for ``job.warmup_share``).  Now an info note says what the window
holds beyond the steps, with no saving.

By construction (``synthetic.nsysexport.write_framed_passes``): the context's first ``cudaMalloc`` lasts
``context_ms``, before the warm-up passes and the framed timed passes.
"""

from __future__ import annotations


import pytest

from tests.support.cli_report import framed_passes_host


def _host(tmp_path, **kw) -> tuple[dict, dict]:  # noqa: ANN001 - pytest's tmp_path
    return framed_passes_host(tmp_path, **kw)


def _cold(host: dict) -> list[dict]:
    return [f for f in host["findings"] if f["rule"] == "cold_start"]


@pytest.mark.parametrize("context_ms", [20.0, 35.0])
def test_start_up_outside_the_steps_is_a_note(tmp_path, context_ms: float) -> None:  # noqa: ANN001
    host, truth = _host(tmp_path, context_ms=context_ms)
    assert host["steps"]["count"] == truth["measured"]
    [note] = _cold(host)
    assert note["severity"] == "info"
    assert note["saving"] is None
    detail = note["metric"]["detail"]
    assert detail["one_time_ms"] == pytest.approx(truth["context_ms"], rel=0.01)
    # the steps are the timed passes alone: their span is the passes', and the window holds more than steps and costs
    assert detail["steps_ms"] == pytest.approx(truth["measured"] * truth["pass_ms"], rel=0.03)
    assert detail["window_ms"] > detail["steps_ms"] + detail["one_time_ms"]
    assert f"outside the {truth['measured']} steps analysed" in note["summary"]


def test_negligible_start_up_says_nothing(tmp_path) -> None:  # noqa: ANN001
    """Control: a context of 1 ms is under ``job.one_time_min_share`` of the window: no note."""
    host, _ = _host(tmp_path, context_ms=1.0)
    assert not _cold(host)


def test_a_window_mostly_start_up_keeps_its_warning(tmp_path) -> None:  # noqa: ANN001
    """Control: a start-up of 45% of the window (``job.warmup_share`` and over) is still the warning it was."""
    host, _ = _host(tmp_path, context_ms=150.0)
    [warn] = _cold(host)
    assert warn["severity"] == "warning"
