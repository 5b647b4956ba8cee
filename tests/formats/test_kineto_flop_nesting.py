"""Which FLOP ops the PyTorch adapter counts (the outermost with shapes that give a number, per thread): the
whole-column decision (``adapter._outside_counted``) agrees with the op-by-op pass (``adapter._counted_op_by_op``,
the reference) on random lines of nested, overlapping, zero-length and negative-time ops, and it decides alone
(returns an answer, not None) on well-nested ones."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from tb_gpu_advisor.formats.kineto import adapter

NAMES = ["aten::mm", "aten::conv2d", "aten::addmm"]


class Host:
    """The HostEvents columns :func:`adapter._flop_ops` reads."""

    def __init__(self, line: np.ndarray, start: np.ndarray, end: np.ndarray, name: np.ndarray):
        self.line, self.start, self.end, self.name, self.names = line, start, end, name, NAMES

    def __len__(self) -> int:
        return len(self.line)


def _nested(rng: np.random.Generator, n: int, lo: int, hi: int, depth: int = 0) -> list[tuple[int, int]]:
    """Well-nested intervals inside [lo, hi), in (start, longer first) order."""
    out: list[tuple[int, int]] = []
    at = lo
    while len(out) < n and at < hi:
        s = int(rng.integers(at, hi))
        e = int(rng.integers(s, min(hi, s + (hi - lo) // 2 + 1) + 1))
        out.append((s, e))
        if depth < 3 and e > s + 1:
            out += _nested(rng, int(rng.integers(0, 4)), s, e, depth + 1)
        at = e
    return out


def _host(rng: np.random.Generator, nested: bool) -> tuple[Host, dict[int, object]]:
    rows: list[tuple[int, int, int]] = []
    for ln in range(int(rng.integers(1, 5))):
        if nested:
            spans = _nested(rng, int(rng.integers(1, 30)), 0, 500)  # a profiler's times: from the origin on
        else:
            s = np.sort(rng.integers(-5, 300, int(rng.integers(1, 30))))
            spans = [(int(a), int(a + rng.integers(-3, 120))) for a in s]
        rows += [(ln, a, b) for a, b in spans]
    line, start, end = (np.array(c, np.int64) for c in zip(*rows))
    h = Host(line.astype(np.int16), start, end, rng.integers(0, len(NAMES), len(line)))
    work: dict[int, object] = {}
    for r in range(len(line)):
        pick = rng.random()
        if pick < 0.6:
            work[r] = SimpleNamespace(flops=float(r), bytes=1.0, precision=0, kind=0, label=f"op{r}", out_bytes=0.5)
        elif pick < 0.75:
            work[r] = None  # shapes recorded, no number
    return h, work


def _both(h: Host, work: dict[int, object], monkeypatch: pytest.MonkeyPatch) -> tuple[dict, dict]:
    kt = SimpleNamespace(op_work=work)
    order = np.arange(len(h))
    fast = adapter._flop_ops(kt, h, order)
    with monkeypatch.context() as m:
        m.setattr(adapter, "_outside_counted", lambda *a: None)
        slow = adapter._flop_ops(kt, h, order)
    return fast, slow


def _same(a: dict, b: dict) -> bool:
    if a["flops_note"] != b["flops_note"] or (a["flop_ops"] is None) != (b["flop_ops"] is None):
        return False
    if a["flop_ops"] is None:
        return True
    fa, fb = a["flop_ops"], b["flop_ops"]
    return (fa.host_idx.tolist() == fb.host_idx.tolist() and fa.flops.tolist() == fb.flops.tolist()
            and fa.label == fb.label)


@pytest.mark.parametrize("nested", [True, False], ids=["nested", "overlapping"])
def test_the_columns_count_what_the_op_by_op_pass_counts(monkeypatch: pytest.MonkeyPatch, nested: bool) -> None:
    rng = np.random.default_rng(7 if nested else 8)
    decided = 0
    for _ in range(400):
        h, work = _host(rng, nested)
        fast, slow = _both(h, work, monkeypatch)
        assert _same(fast, slow)
        valid = np.array([work.get(r) is not None for r in range(len(h))])
        decided += adapter._outside_counted(h.line, h.start, h.end, valid) is not None
    if nested:
        assert decided == 400  # well-nested ops never need the op-by-op pass
    else:
        assert 0 < decided < 400  # both ways are exercised


def test_a_counted_op_that_overlaps_a_later_one_is_left_to_the_op_by_op_pass() -> None:
    # op 0 [0, 10) counted; op 1 [5, 20) inside by its start but ends after: the running maximum would say 20, the
    # pass still says 10, so op 2 at 12 is counted -- the columns must not decide this line
    line, start, end = np.zeros(3, np.int16), np.array([0, 5, 12]), np.array([10, 20, 15])
    assert adapter._outside_counted(line, start, end, np.ones(3, bool)) is None
    assert adapter._outside_counted(line, start, end, np.array([True, False, True])).tolist() == [True, False, True]
