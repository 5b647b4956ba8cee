"""``job.iterations._replaced_graph`` (h37-huntsnap63, h37-rev63b) read all of a history's blocks at once (h37-review64).

Base asked each block freed after the history's last allocation about every lifetime and every allocation of its size
(quadratic: 64k same-size blocks 3.6 s of CPU, 128k 9.7 s) and, to bound that, read a size holding more than 20M
(block, lifetime) pairs as a teardown unasked.  A rebinding forward whose graph holds 4,500 blocks of one size is such
a size: its previous graph, freed after the last pass returned, was read as the script's teardown.

Truth by construction (allocator events written here, as in ``test_teardown_after_gpu_state_dict_rev63b``); the
per-block rule itself is checked against its own statement, written out as a slow loop, on random histories."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.job import iterations
from tb_gpu_advisor.model.trace import MemoryEvents

ACT = 1 << 20


def _memory(ev: list[tuple[int, int]]) -> MemoryEvents:
    d = np.array([e[0] for e in ev], np.int64)
    n = d.size
    return MemoryEvents(gpu=0, source="PyTorch memory snapshot", baseline="absolute", t=np.arange(n, dtype=np.int64),
                        delta=d, allocated=np.cumsum(d), reserved=np.full(n, -1, np.int64),
                        addr=np.array([e[1] for e in ev], np.int64), op=np.full(n, -1, np.int32),
                        phase=np.full(n, -1, np.int8))


def _rebound_passes(k: int) -> list[tuple[int, int]]:
    """A forward with autograd on rebinding its output (``out = model(x)``), recorded from its second pass: each
    pass's graph holds ``k`` outputs of one size; the first pass's graph, made before the recording, is freed once the
    second has returned, the second's once the third has."""
    ev = [(ACT, 10_000 + i) for i in range(k)]  # pass 2's graph
    ev += [(-ACT, 1 + i) for i in range(k)]  # pass 1's graph (made before the history) dropped at the rebinding
    ev += [(ACT, 20_000 + i) for i in range(k)]  # pass 3's graph
    ev += [(-ACT, 10_000 + i) for i in range(k)]  # pass 2's dropped: after the history's last allocation
    return ev


def test_a_rebound_graph_of_many_blocks_is_no_teardown():
    """4,500 blocks of one size against 4,500 lifetimes of it (20.25M pairs): base read the second pass's graph,
    freed at the rebinding, as the teardown (event 13,500); it is a replaced graph, and the history has no teardown.
    Fails on base."""
    me = _memory(_rebound_passes(4500))
    assert iterations.teardown_start(me) is None


def test_a_rebound_graph_of_few_blocks_is_no_teardown():
    """Control (passes on base): the same with 50 blocks a graph, under base's bound."""
    assert iterations.teardown_start(_memory(_rebound_passes(50))) is None


def _slow(me: MemoryEvents, blocks: np.ndarray, frees: np.ndarray) -> np.ndarray:
    """The rule as its docstring states it, block by block."""
    allocs = np.flatnonzero(me.delta > 0)
    last = int(allocs[-1])
    unseen = me.unseen_frees()
    unseen = unseen[unseen <= last]
    life = [(int(a), int(frees[a]), int(me.delta[a])) for a in allocs if frees[a] <= last]
    life += [(-1, int(u), int(-me.delta[u])) for u in unseen]
    out = []
    for b in blocks.tolist():
        s = int(me.delta[b])
        over = [e for m, e, z in life if z == s and m < b < e]
        if not over:
            out.append(False)
            continue
        o = min(over)
        succ = [a for a in allocs.tolist() if me.delta[a] == s and a > o and frees[a] > frees[b]]
        out.append(bool(succ) and not any(z == s and m > o and e < succ[0] for m, e, z in life))
    return np.array(out, bool)


def _random_history(rng: np.random.Generator, n: int) -> MemoryEvents:
    """Allocations of three sizes made and freed at random, some freed before the history (made before it), some
    never: every reading of lifetimes the rule distinguishes."""
    sizes = [ACT, 2 * ACT, 3 * ACT]
    live: list[tuple[int, int]] = [(int(rng.choice(sizes)), -(i + 1)) for i in range(int(rng.integers(0, 6)))]
    ev: list[tuple[int, int]] = []
    addr = 1
    for _ in range(n):
        if live and rng.random() < 0.45:
            z, a = live.pop(int(rng.integers(len(live))))
            ev.append((-z, a))
        else:
            z = int(rng.choice(sizes))
            ev.append((z, addr))
            live.append((z, addr))
            addr += 1
    rng.shuffle(live)
    ev += [(-z, a) for z, a in live[: len(live) * 2 // 3]]  # freed after the last allocation
    return _memory(ev)


def test_every_block_read_as_the_rule_states():
    """Control (passes on base): 300 random histories, each block freed after the last allocation read as the
    block-by-block statement of the rule reads it."""
    rng = np.random.default_rng(64)
    checked = 0
    for _ in range(300):
        me = _random_history(rng, int(rng.integers(4, 40)))
        frees = me.frees()
        allocs = np.flatnonzero(me.delta > 0)
        if not allocs.size:
            continue
        blocks = allocs[frees[allocs] > allocs[-1]]
        blocks = blocks[frees[blocks] < len(me)]
        got = iterations._replaced_graph(me, blocks, frees)
        assert got.tolist() == _slow(me, blocks, frees).tolist()
        checked += int(got.sum())
    assert checked > 20  # the histories hold replaced graphs, not only blocks read as none
