"""DeepSpeed ZeRO-1/2 under gradient accumulation: each iteration closed by the update launched outside DeepSpeed's
ranges, not one step per micro-batch (issue #37 class 2, h37-zero12).

What a ZeRO-1/2 run pushes (deepspeedai/DeepSpeed @edaa7221): ``DeepSpeedEngine.forward`` / ``.backward`` (and
``.allreduce_gradients`` inside the backward) once a micro-batch (``runtime/engine.py``, ``@instrument_w_nvtx``);
``runtime/zero/stage_1_and_2.py`` decorates nothing, ``DeepSpeedEngine.step`` is not decorated, and it runs the
optimizer's update (``_take_model_step``) only where ``is_gradient_accumulation_boundary()`` -- every
``gradient_accumulation_steps``-th micro-batch -- outside DeepSpeed's ranges.  Main read the most repeated range,
``forward``: one step per micro-batch.  Nsight exports by construction (``synthetic.nsysexport.NsysJob``: only
DeepSpeed's ranges, no ATen op range; ``""`` in ``extra_ranges`` is the update's block of kernels in no range), every
iteration the period long.
"""

from __future__ import annotations

import numpy as np
import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.steps.iterations import _thread_updates
from tests.support.cli_report import first_host

_MICRO = ("DeepSpeedEngine.forward", "DeepSpeedEngine.backward")


def _host(tmp_path, gas: int, **kw):  # noqa: ANN001 - pytest's tmp_path
    path = tmp_path / "zero12.sqlite"
    truth = nx.write(str(path), nx.NsysJob(**{"steps": 4, "ops": 4 * gas + 4, "step_range": None,
                                              "autograd_nvtx": False, "extra_ranges": _MICRO * gas + ("",), **kw}))
    return first_host(path), truth


def _assert_iterations(host: dict, truth: nx.Truth) -> None:
    assert host["steps"]["found"] == truth.steps
    rows = [r["step_ms"] for r in host["step_rows"]]
    assert rows and all(abs(ms - truth.step_ms) < 0.01 for ms in rows), (rows, truth.step_ms)


@pytest.mark.parametrize(("gas", "ranks", "domain"), [(2, 1, None), (2, 2, "DeepSpeed"), (4, 1, "DeepSpeed"),
                                                      (4, 3, None)])
def test_accumulated_micro_batches_are_one_iteration(tmp_path, gas, ranks, domain):  # noqa: ANN001
    """Main: 8 steps of 5.13 and 1.5 ms (accumulation 2), 16 of 1.2-4.83 ms (4) for 4 iterations."""
    host, truth = _host(tmp_path, gas, ranks=ranks, range_domain=domain, input_ms=1.0)
    _assert_iterations(host, truth)
    note = host["steps"]["note"]
    assert "`DeepSpeedEngine.forward`" in note and f"every {gas}th" in note and "update" in note, note


def test_two_iterations_the_last_update_at_the_captures_end(tmp_path):  # noqa: ANN001
    """Two iterations of 2 micro-batches: the last update's tail runs to the capture's end (main: 4 steps)."""
    host, truth = _host(tmp_path, 2, steps=2)
    _assert_iterations(host, truth)


def test_control_without_accumulation_each_forward_is_an_iteration(tmp_path):  # noqa: ANN001
    """Every micro-batch updates: no k >= 2, the engine's ``forward`` marks the steps as on main."""
    host, truth = _host(tmp_path, 1)
    _assert_iterations(host, truth)
    assert host["steps"]["source"] == "nvtx_top_range"


def test_control_zero3_still_reads_its_optimizers_step(tmp_path):  # noqa: ANN001
    path = tmp_path / "zero3.sqlite"
    truth = nx.write(str(path), nx.NsysJob(steps=4, ops=12, step_range=None, autograd_nvtx=False,
                                           extra_ranges=_MICRO * 2 + ("DeepSpeedZeroOptimizer_Stage3.step",)))
    host = first_host(path)
    _assert_iterations(host, truth)
    assert "DeepSpeedZeroOptimizer_Stage3.step" in host["steps"]["note"]


# One thread, by construction: micro-batch j starts at 100 j, its ranges end at 100 j + 60; ``extra`` maps a
# micro-batch to its tail's launch ends (after 60, before the next start).
def _thread(n: int, extra: dict[int, list[int]], every: list[int] = ()):  # noqa: ANN202
    micro = np.arange(n, dtype=np.int64) * 100
    launched = np.sort(np.array([100 * j + t for j, ts in extra.items() for t in ts]
                                + [100 * j + t for j in range(n) for t in every], np.int64))
    return _thread_updates(micro, micro.copy(), micro + 60, launched, (launched - 1, launched))


def test_updates_every_second_micro_batch():
    k, ends, whole = _thread(6, {1: [70, 80], 3: [70, 80], 5: [70, 80]})
    assert (k, whole) == (2, True) and ends.tolist() == [180, 380, 580]


def test_a_launch_every_tail_is_no_update_but_more_is():
    """The loop's own kernel after every micro-batch (a cast of its batch) is no update; the tails launching more are."""
    got = _thread(8, {3: [70, 75], 7: [70, 75]}, every=[90])
    assert got is not None and got[0] == 4 and got[1].tolist() == [390, 790]


def test_a_window_opened_mid_iteration_drops_its_first():
    k, ends, whole = _thread(7, {0: [70], 3: [70], 6: [70]})
    assert (k, whole) == (3, False) and ends.tolist() == [70, 370, 670]


@pytest.mark.parametrize(("n", "extra"), [
    (8, {1: [70], 3: [70], 6: [70]}),  # no one beat
    (6, {0: [70], 1: [70], 2: [70], 3: [70], 4: [70]}),  # every micro-batch updates: k = 1
    (6, {3: [70]}),  # one update
    (10, {1: [70], 3: [70], 5: [70], 9: [70]}),  # an update missed: more than k micro-batches after the last
    (3, {0: [70], 2: [70]}),  # too few micro-batches for two updates k >= 2 apart
])
def test_no_accumulation_boundary_shown(n, extra):
    assert _thread(n, extra) is None
