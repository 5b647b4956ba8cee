"""The idle-SM bound's time alone (h37-survey35): per launch, the time no other kernel or collective of its GPU ran
beside it, and the union of small launches' time -- both against a brute-force count over random intervals."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from tb_gpu_advisor import devices
from tb_gpu_advisor.metrics import underfill


def _brute_shared(start, end, i) -> int:
    """Time of event ``i`` during which at least one other event runs."""
    others = sorted((max(start[i], s), min(end[i], e)) for j, (s, e) in enumerate(zip(start, end))
                    if j != i and s < end[i] and e > start[i])
    covered, reach = 0, start[i]
    for a, b in others:
        a = max(a, reach)
        if b > a:
            covered, reach = covered + b - a, b
    return int(covered)


def _brute_union(start, end) -> int:
    covered, reach = 0, None
    for a, b in sorted(zip(start.tolist(), end.tolist())):
        if reach is None or a >= reach:
            covered, reach = covered + b - a, b
        elif b > reach:
            covered, reach = covered + b - reach, b
    return covered


def test_time_beside_others_and_union_match_a_brute_count():
    rng = np.random.default_rng(35)
    for _ in range(80):
        n = int(rng.integers(2, 40))
        start = rng.integers(0, 1000, n).astype(np.int64)
        end = start + rng.integers(0, 200, n)
        kind = np.where(rng.random(n) < 0.8, devices.KIND_KERNEL, devices.KIND_COLLECTIVE).astype(np.int8)
        d = SimpleNamespace(start=start, end=end, kind=kind)
        spans = underfill._shared_spans(d)
        got = (underfill._shared_time(spans, start, end) if spans is not None else np.zeros(n, np.int64)).tolist()
        assert got == [_brute_shared(start, end, i) for i in range(n)]
        mask = rng.random(n) < 0.5
        assert underfill._union_ps(d, mask) == _brute_union(start[mask], end[mask])


def test_control_copies_are_on_the_copy_engines_not_beside_a_kernel():
    """A copy overlapping a kernel takes none of its SMs: no shared time."""
    d = SimpleNamespace(start=np.array([0, 10], np.int64), end=np.array([100, 50], np.int64),
                        kind=np.array([devices.KIND_KERNEL, devices.KIND_H2D], np.int8))
    assert underfill._shared_spans(d) is None
