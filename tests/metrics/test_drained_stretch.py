"""What a wait costs, against its own twin (issue #37 class 3, h37-waits2).

The assumption was that a sync costs the gap after it (the GPU's idle from the end of the last device event before
its next launch to that launch, capped by the host's time blocked in the sync).  A loop whose host runs ``H`` a step besides ``W`` blocked in
its wait, over ``B`` of GPU work, steps at ``H + W``; without the wait it steps at ``max(B, H)``: the wait costs
``min(H + W - B, W)`` -- the idle it exposes where the host's own time fits under the GPU's work, else the time it
blocked.  A read that copies its value out splits that idle with its own copy (``jax_train_float_loss``: ~250 us of
idle before the copy, ~460 us after it), and a kept step's last wait, whose next work is the next (unkept) step's,
was dropped.  ``metrics.syncs`` now measures each of the program's syncs over its drained stretch (from the drain --
the end of the work launched before it began -- to the first device event after it returned), capped as before.

Truth: the real JAX twins of ``tests/fixtures/h200_waits`` (``scripts/capture_waits.py``); by construction, the
eager loop of ``synthetic.torchtrace`` with and without its ``.item()`` (the twin's step less the loop's is the
saving) and the JAX read loop (``tests/metrics/test_jax_blocking_reads.py``).
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

from synthetic.torchtrace import GEMM_FWD, TANH_F32, Rank, trace_doc
from tb_gpu_advisor import formats
from tb_gpu_advisor.rules.host_sync import replay_wait_held_by_syncs
from tb_gpu_advisor.runtime.pipeline import host_metrics, host_report
from tests.support.waits import waits_metrics as _metrics



def _eager(tmp_path, sync: bool, host_us: float = 0.0):  # noqa: ANN001, ANN202
    """An eager step: six 5 us element-wise kernels, then eight 80 us GEMMs (670 us of GPU work), each launched by
    its op (20 us of host time a kernel); ``host_us`` of the host's own op first; ``.item()`` at the end where
    ``sync``.  Returns the metrics and the loop's step as the GPU runs it (the mean time between steps' first
    kernels, first and last dropped as the analysis drops them)."""
    def body(r: Rank) -> None:
        if host_us:
            r.cpu("aten::nonzero", host_us)
        for _ in range(6):
            r.kernel("aten::add", TANH_F32, 5.0, launch_us=14.0)
        for _ in range(8):
            r.kernel("aten::mm", GEMM_FWD, 80.0, launch_us=14.0)
        if sync:
            r.sync()

    r = Rank(rank=0, pid=4242, device=0)
    firsts = []
    for n in range(10):
        k0 = len(r.gpu)
        r.step(n, body)
        firsts.append(min(e["ts"] for e in r.gpu[k0:] if e["cat"] == "kernel"))
    p = tmp_path / f"{'sync' if sync else 'twin'}_{host_us:g}" / "w.1.pt.trace.json"
    p.parent.mkdir(parents=True)
    p.write_text(json.dumps(trace_doc(r, 1)))
    m = host_metrics(formats.read(SimpleNamespace(host="w", path=str(p), format="kineto")))
    return m, float(np.mean(np.diff(firsts)[1:-1])) / 1000.0


def test_control_a_host_bound_loop_is_given_no_more_than_its_wait(tmp_path):
    """600 us of the host's own op a step: the twin is host-bound (890 us a step), so the sync saves the time the host
    blocked in it (0.497 ms of a 0.507 ms saving), however much idle the drained stretch holds (0.71 ms of launch
    wait): main and branch alike."""
    m, step = _eager(tmp_path, sync=True, host_us=600.0)
    _, twin_step = _eager(tmp_path, sync=False, host_us=600.0)
    saved = step - twin_step
    assert m.syncs.gpu_idle_ms_per_step <= m.syncs.wait_ms_per_step + 1e-9
    assert 0.8 * saved <= m.syncs.gpu_idle_ms_per_step <= saved



def _step(run: str) -> float:
    return sum(_metrics(run).breakdown.as_dict().values())


def _saving(run: str) -> float:
    (f,) = [f for f in host_report(_metrics(run), 0).findings if f.rule == "host_sync"]
    return f.saving.ms_per_step


@pytest.mark.parametrize("run", ["jax_train_block_until_ready_annotated", "jax_train_float_loss"])
def test_the_jax_waits_are_predicted_within_a_quarter_of_their_twin(run: str) -> None:
    """Realised: the step less the no-wait twin's (327 us).  Main predicted 323 of 415 us (78%) and 415 of 652 us
    (64%: the read's own copy split its idle, and the last kept step's wait was dropped); now 336 (81%) and 538
    (83%), within the diff's 25%.  Both loops' host time besides the wait (381, 433 us a step) exceeds the GPU's
    323 us, so the cap is the wait itself (361, 546 us); the twin's host ran faster than that (~320 us a step)."""
    realised = _step(run) - _step("jax_train_no_wait")
    assert 0.8 * realised <= _saving(run) <= realised + 0.002
    # the cap: the host's time blocked, and the idle before the graph replays its host prepares only after the wait
    # (h37-tiny69: 414 and 652 us now, within 1% of the twin)
    assert _saving(run) <= _metrics(run).syncs.wait_ms_per_step + replay_wait_held_by_syncs(_metrics(run))


def test_a_host_bound_wait_loop_is_given_its_whole_wait() -> None:
    """``jax_train_block_until_ready``: its host runs 510 us a step besides its 359 us wait, over 323 us of GPU work
    -- by its own numbers a host-bound loop, whose wait saves the time it blocked.  Main gave 322 us (90%: its last
    kept step's wait was dropped); then 353 us (98%).  The twin realised 543 us because its host dispatched in ~300
    us a step (``PjitFunction`` 250-306 us here 446-522): the ~190 us a step the GPU idles before the graph replays
    the waiting host prepares only after its wait (``host_sync.replay_wait_held_by_syncs``), which the saving now
    holds too (h37-tiny69: 543 us, the twin's)."""
    m = _metrics("jax_train_block_until_ready")
    whole = m.syncs.wait_ms_per_step + replay_wait_held_by_syncs(m)
    assert 0.95 * whole <= _saving("jax_train_block_until_ready") <= whole


@pytest.mark.parametrize("run", ["jax_train_block_until_ready", "jax_train_block_until_ready_annotated",
                                 "jax_train_float_loss"])
def test_the_wait_and_the_launch_check_claim_the_launch_wait_once(run: str) -> None:
    """The launch wait the sync claims is left out of the launch check's (``launch_bound.after_waits_ms``): the two
    claims of launch wait add up to no more than the ledger's."""
    m = _metrics(run)
    h = host_report(m, 0)
    lb = [f for f in h.findings if f.rule == "launch_bound"]
    lw = m.syncs.gpu_idle_ledger_ms.get("launch_wait", 0.0) + sum(f.saving.ms_per_step for f in lb if f.saving)
    assert lw <= m.breakdown.launch_wait + 1e-3


def test_control_a_read_that_finds_the_queue_empty_costs_nothing() -> None:
    """``torch_numpy_read``: eager, its host's launches bound the step (4.1 ms over 0.6 ms of GPU work); the read waits
    5 us.  Its drained stretch holds 2.6 ms of launch wait, but the cap is the wait: 5 us, no finding."""
    m = _metrics("torch_numpy_read")
    assert m.syncs.gpu_idle_ms_per_step <= m.syncs.wait_ms_per_step <= 0.01
    assert "host_sync" not in {f.rule for f in host_report(m, 0).findings}
