"""``steps.recurring``: the turns of an unmarked loop are those of the work that runs once in each iteration -- the
outermost loop's, not a layer's inside it, nor a branch's that some iterations skip (h37-coldloop30).  Truth by
construction: a loop of ``iterations`` turns, each an upload and an input kernel, then ``layers`` layers of two kernels,
and in every iteration whose number is not a multiple of ``skip`` a branch of two kernels of its own."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.steps.recurring import recurring_turns


@dataclass
class _Device:
    """The columns ``recurring_turns`` reads of a device's events."""

    names: list[str]
    name: np.ndarray
    start: np.ndarray
    end: np.ndarray

    def __len__(self) -> int:
        return int(self.start.size)


def _loop(iterations: int = 10, layers: int = 6, skip: int = 3, period_us: float = 1000.0) -> tuple[_Device, list[float]]:
    names = ["upload", "input_kernel", "gemm", "softmax", "branch_a", "branch_b", "warm_up_fill"]
    seq: list[tuple[int, float]] = [(6, 0.0), (6, 50.0)]  # two one-off fills before the loop
    opens = []
    for k in range(iterations):
        t = 500.0 + k * period_us
        opens.append(t)
        seq += [(0, t), (1, t + 10.0)]
        seq += [(2 + j % 2, t + 20.0 + 10.0 * j) for j in range(2 * layers)]
        if k % skip:
            seq += [(4, t + 700.0), (5, t + 710.0)]
    name = np.asarray([n for n, _ in seq], np.int32)
    start = np.asarray([t for _, t in seq]) * 1e6  # ps
    return _Device(names, name, start, start + 5e6), opens


def test_the_loops_turns_not_its_layers_nor_its_branch():
    dev, opens = _loop()
    found = recurring_turns([dev])
    assert found is not None
    assert found.start.size == len(opens) and np.allclose(found.start / 1e6, opens)
    assert found.names[:2] == ("upload", "input_kernel")
    assert np.allclose((found.end[:-1] - found.start[:-1]) / 1e9, 1.0)  # one period, ms


def test_control_no_two_events_turn_in_step():
    dev, _ = _loop()
    keep = dev.name != 1  # the input kernel gone: the upload turns alone, and the layers' kernels in step
    dev = _Device(dev.names, dev.name[keep], dev.start[keep], dev.end[keep])
    # the layers are no iterations (the upload runs every 6th layer), and one event alone times none
    assert recurring_turns([dev]) is None
