"""A TF 2.x custom loop's eager ``.numpy()`` after an asynchronous ``tf.function`` call is the sync's wait (h37-probe44x,
issue #37 classes 3 and 4; h37-probe43x *Left* (b)).

Truth by construction: ``synthetic.tfcapture.write_numpy_read_loop`` -- per step ``IteratorGetNext`` (tf.data's own
90 us), 700 us of Python the profiler does not record, ``_EagerConst`` and ``EagerCopyToDevice``, the
``__inference_train_step`` call launching a small MLP faster than the GPU runs it, then ``loss.numpy()``:
``TensorHandle::CopyToDevice`` syncs the device (``cuStreamSynchronize``, ~320 us while the GPU drains the backlog),
then copies 4 bytes out.  Without the read each step the host's next fetch and Python run while the GPU drains: the
loop steps ~320 us sooner (host-bound: its own time is over the GPU's).

On 5ee59eff the sync's drained stretch ended at the read's own 4-byte copy (7 us of idle), then at the next step's
input wait, and left out the Python the profiler did not record: host_sync found nothing (0.007 ms a step).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic.tfcapture import write_numpy_read_loop
from tb_gpu_advisor.formats import read
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.rules import evaluate
from tb_gpu_advisor.runtime.pipeline import host_metrics


def _run(tmp_path: Path, **kw):
    path = tmp_path / "worker0.xplane.pb"
    truth = write_numpy_read_loop(str(path), **kw)
    m = host_metrics(read(HostFile("worker0", str(path), 0, 0, "xplane")))
    return m, evaluate(m), truth


def test_the_numpy_reads_wait_is_the_syncs_in_tf_words(tmp_path: Path) -> None:
    m, findings, truth = _run(tmp_path)
    s = m.syncs
    assert s.calls_per_step == pytest.approx(1.0)
    assert s.wait_ms_per_step == pytest.approx(truth["sync_ms"], rel=0.05)
    # the claim: what the read costs the loop, its wait (the ledger keeps the kept steps' part); main: 0.007 ms
    assert 0.75 * truth["sync_ms"] <= s.gpu_idle_ms_per_step <= s.wait_ms_per_step + 1e-9
    (f,) = [f for f in findings if f.rule == "host_sync" and "#" not in f.id]
    assert f.severity != "info"
    assert ".numpy()" in " ".join(a.text for a in f.actions), [a.text for a in f.actions]
    # the 4 bytes it moves are no copy's cost: nothing to pin or prefetch
    assert s.copy_calls_per_step == 0.0
    assert not [f for f in findings if f.rule == "excessive_memcpy" and f.severity != "info"]


def test_control_a_read_that_finds_the_queue_short_claims_no_more_than_its_wait(tmp_path: Path) -> None:
    """Control (main too): GPU work shorter than the launches -- the read waits microseconds, and is given no more."""
    m, findings, truth = _run(tmp_path, other_us=8.0)
    assert truth["sync_ms"] < 0.02
    assert m.syncs.gpu_idle_ms_per_step <= m.syncs.wait_ms_per_step + 1e-9
    assert not [f for f in findings if f.rule == "host_sync" and f.severity != "info"]


def test_control_the_input_wait_is_tf_datas_own(tmp_path: Path) -> None:
    """Control (main too): the input wait is ``IteratorGetNext``'s own time; the untraced Python after it is not."""
    m, _, truth = _run(tmp_path)
    assert m.input.own_ms_per_step == pytest.approx(truth["input_ms"], rel=0.05)
    assert m.breakdown.input_wait == pytest.approx(truth["input_ms"], rel=0.1)
