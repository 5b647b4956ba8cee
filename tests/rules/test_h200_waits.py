"""Each wait to its cause, on our own H200 captures (issue #37 class 3; ``tests/fixtures/h200_waits``, truth by
construction: ``scripts/capture_waits.py``).

Two assumptions were wrong:

* JAX's waits are its reads only.  ``jax.block_until_ready`` writes no TraceMe (jaxlib waits on the buffers' futures
  in C++), so a loop that waits each step was read as launch-bound (fix: ``lax.scan``) with step gaps -- never as the
  program draining the queue itself.  With the Python tracer on (``jax.profiler.start_trace``'s default) the wait IS
  recorded: the frame ``$api.py:2757 block_until_ready`` spans it (~330 us a step here).  The framework's one home for
  the program's waits (``Framework.blocking_read_event``) now holds JAX's waiting functions by their frame's function
  name, any file and line; the gaps' check leaves the idle after those waits to them (claimed once).
* Host work between steps is syncs.  PyTorch's gap words and fix were ".item() and other syncs" whatever the gaps held;
  ``torch_unrecorded_host_work``'s gaps hold a CPU op (``aten::repeat`` of a numpy batch) and no sync at all.  The
  words and the fix now follow what the gaps hold.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from tb_gpu_advisor import frameworks
from tb_gpu_advisor.metrics.syncs import _outermost
from tb_gpu_advisor.rules import step_gaps
from tb_gpu_advisor.runtime.pipeline import host_report
from tests.support.waits import waits_metrics as _metrics




def _host(run: str):  # noqa: ANN202
    """The host report of a kept run."""
    return host_report(_metrics(run), 0)


def _bad(h) -> list:  # noqa: ANN001
    return [f for f in h.findings if f.severity in ("warning", "critical")]


def test_jax_wait_frames_are_the_programs_waits_by_function_name() -> None:
    """Unit: the Python tracer's frames of JAX's waiting functions, any file and line (main: only
    ``np.asarray(jax.Array)``)."""
    jax = frameworks.get("jax")
    for name in ("$api.py:2757 block_until_ready", "$array.py:612 block_until_ready", "$api.py:3001 device_get",
                 "np.asarray(jax.Array)"):
        assert jax.blocking_read_event(name), name
    for name in ("block_until_ready", "$api.py:2757 block_until_ready_all", "$capture_waits.py:93 _jax_wait",
                 "$api.py:10 device_put", "LocalDeviceState::WaitFor"):
        assert not jax.blocking_read_event(name), name
    assert not frameworks.get("pytorch").blocking_read_event("$api.py:2757 block_until_ready")


def test_a_wait_around_a_read_is_one_wait() -> None:
    """``jax.device_get`` reads each array through ``np.asarray(jax.Array)`` inside its own frame: one wait, not two
    (the outer one kept); waits on another line or after it stay."""
    h = SimpleNamespace(line=np.array([0, 0, 0, 1]), start=np.array([10, 12, 40, 12]), end=np.array([30, 20, 50, 20]))
    assert _outermost(h, np.arange(4)).tolist() == [0, 2, 3]


@pytest.mark.parametrize("run", ["jax_train_block_until_ready", "jax_train_block_until_ready_annotated"])
def test_a_jax_loop_that_waits_each_step_is_the_waits_finding(run: str) -> None:
    """Main: top launch_bound (fix: lax.scan) and step_gaps, no host_sync.  Now the wait is the top finding, named by
    its frame, with the fix that waits once every N steps; the gaps' check claims none of the idle it leaves."""
    h = _host(run)
    top = _bad(h)[0]
    assert top.rule == "host_sync", [f.rule for f in _bad(h)]
    assert "block_until_ready" in top.summary and "1 time per step" in top.summary
    assert "every N steps" in top.actions[0].text and "block_until_ready" in top.actions[0].text
    assert "step_gaps" not in {f.rule for f in h.findings}
    # the wait's idle is most of the step's idle beyond the no-wait loop's step (869/742 us vs 327 us)
    assert top.saving.ms_per_step >= 0.25 * sum(_metrics(run).breakdown.as_dict().values())


def test_controls_the_loop_without_a_wait_stays_healthy_and_a_read_keeps_its_finding() -> None:
    """``jax_train_no_wait`` ends in one ``block_until_ready`` after its last step, outside every step: healthy.
    ``jax_train_float_loss`` keeps its read (``np.asarray(jax.Array)``) as its top finding."""
    assert not _bad(_host("jax_train_no_wait"))
    h = _host("jax_train_float_loss")
    top = _bad(h)[0]
    assert top.rule == "host_sync" and "np.asarray(jax.Array)" in top.summary
    assert "step_gaps" not in {f.rule for f in _bad(h)}  # main: step_gaps critical, 166 us of the read's idle again


@pytest.mark.parametrize("run", ["torch_unrecorded_host_work", "torch_unrecorded_host_work_numpy_read"])
def test_gaps_that_hold_cpu_ops_and_no_sync_get_the_cpu_ops_words_and_fix(run: str) -> None:
    """Main: "host work between steps (Python, .item() and other syncs)" and the fix "Keep .item(), .cpu(), print(loss)
    ... out of the step", on gaps holding ``aten::repeat`` (5.66 ms a step) and no sync."""
    h = _host(run)
    (g,) = [f for f in h.findings if f.rule == "step_gaps"]
    assert "CPU ops between steps" in g.summary and ".item()" not in g.summary
    assert "`aten::repeat`" in g.actions[0].text and "DataLoader workers" in g.actions[0].text
    assert not any(".item()" in a.text for a in g.actions)


def test_control_gaps_after_a_sync_keep_the_sync_words() -> None:
    """The words follow what the gaps hold: the same run read as if a sync's idle filled its gaps gets the sync's
    words and fix back (``rules.step_gaps._cpu_ops``)."""
    import copy

    m = copy.deepcopy(_metrics("torch_unrecorded_host_work"))
    m.syncs.in_gaps_ledger_ms = {"host_compute": 0.15 * m.gaps.avg_gap_ms}  # a sixth of each gap: the rest still fires
    (g,) = step_gaps.check(m)
    assert "CPU ops" not in g.summary and ".item()" in g.summary
    assert any(".item()" in a.text for a in g.actions)
