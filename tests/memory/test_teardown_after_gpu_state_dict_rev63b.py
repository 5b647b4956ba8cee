"""A training loop whose weights were loaded from a state dict already on the GPU (``sd = torch.load(path,
map_location='cuda')`` before the model is built on it, ``load_state_dict(sd); del sd``) and whose gradients
``zero_grad(set_to_none=True)`` frees each step (PyTorch 2's default): its script's teardown is still the teardown
(h37-rev63b review of h37-huntsnap63's ``job.iterations._replaced_graph``).

Truth by construction (allocator events written here): the state dict's tensors are made before each weight of their
size and freed after it -- as a rebinding forward's previous graph is -- and the last step's gradients, of those sizes
too, are made after that and freed after each weight at the teardown -- as the next pass's graph is.  But between the
state dict's free and the last gradients, every step freed and made gradients of those bytes again: the weights lived
across the loop's iterations, which no pass's graph does.  Base read every weight as a replaced graph and found no
teardown (None); the teardown starts at the first weight's free."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.job import iterations
from tb_gpu_advisor.model.trace import MemoryEvents

WEIGHTS, WEIGHT, ACT = 20, 1 << 22, 1 << 20


def _events(steps: int = 6) -> tuple[MemoryEvents, int]:
    ev: list[tuple[int, int]] = [(WEIGHT, 1000 + i) for i in range(WEIGHTS)]  # the state dict, on the GPU
    ev += [(WEIGHT, 2000 + i) for i in range(WEIGHTS)]  # the model built on the GPU
    ev += [(-WEIGHT, 1000 + i) for i in range(WEIGHTS)]  # del sd
    for step in range(steps):
        ev += [(ACT, 9000 + k) for k in range(8)]
        if step:
            ev += [(-WEIGHT, 3000 + i) for i in range(WEIGHTS)]  # zero_grad(set_to_none=True)
        ev += [(WEIGHT, 3000 + i) for i in range(WEIGHTS)]  # backward: the gradients
        ev += [(-ACT, 9000 + k) for k in range(8)]
    ev += [(ACT, 7777), (-ACT, 7777)]
    teardown = len(ev)
    for i in range(WEIGHTS):  # each parameter freed with its gradient
        ev += [(-WEIGHT, 2000 + i), (-WEIGHT, 3000 + i)]
    d = np.array([e[0] for e in ev], np.int64)
    n = d.size
    me = MemoryEvents(gpu=0, source="PyTorch memory snapshot", baseline="absolute", t=np.arange(n, dtype=np.int64),
                      delta=d, allocated=np.cumsum(d), reserved=np.full(n, -1, np.int64),
                      addr=np.array([e[1] for e in ev], np.int64), op=np.full(n, -1, np.int32),
                      phase=np.full(n, -1, np.int8))
    return me, teardown


def test_weights_loaded_from_a_gpu_state_dict_are_torn_down():
    """Base: None (every weight a "replaced graph"); now the first weight's free.  Fails on base."""
    me, teardown = _events()
    assert int(me.allocated[-1]) == 0  # everything made is freed
    assert iterations.teardown_start(me) == teardown
