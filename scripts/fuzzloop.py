"""The loop the fuzz-equality scripts share (``xplane_fuzz_equal.py``, ``kineto_fuzz_equal.py``,
``snapshot_fuzz_equal.py``): each reads a set of fixed hostile inputs, then mutations of seed files for a time
budget, through a compiled reader and its Python twin, and counts what differs.  Why one module: the three
differed only in their reader, their inputs and their mutations; the options, the loop, the saving of mismatches
and the summary were written out three times."""

from __future__ import annotations

import argparse
import collections
import random
import time
from collections.abc import Callable, Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def options(doc: str) -> tuple[argparse.Namespace, random.Random]:
    """``--seconds`` and ``--seed`` (every fuzz script's), and the seeded generator of its mutations."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=38)
    a = ap.parse_args()
    return a, random.Random(a.seed)


class Tally:
    """What the reference made of each input (its result's or error's type name) and the inputs both paths read
    differently: every script's ``check`` records into one."""

    def __init__(self) -> None:
        self.counts: collections.Counter[str] = collections.Counter()
        self.bad: list[bytes] = []

    def record(self, data: bytes, outcome: str, differs: bool) -> None:
        self.counts[outcome] += 1
        if differs:
            self.counts["MISMATCH"] += 1
            self.bad.append(data)


def outcome(ref: object, ok_name: str) -> str:
    """``ok_name`` for a result, the exception's type name for an error."""
    return type(ref).__name__ if isinstance(ref, Exception) else ok_name


def run(fixed: Iterable[bytes], pool: list[bytes], mutate: Callable[[random.Random, bytes], bytes],
        check: Callable[[bytes, int, bool], None], seconds: float, rng: random.Random) -> tuple[int, int]:
    """Check each fixed input, then mutations of a random seed of ``pool`` until ``seconds`` have passed.
    ``check(data, index, fixed)``.  Returns (inputs checked, of them fixed)."""
    n = 0
    for data in fixed:
        check(data, n, True)
        n += 1
    first = n
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        check(mutate(rng, rng.choice(pool)), n, False)
        n += 1
    return n, first


def finish(tally: Tally, suffix: str, lines: list[str]) -> int:
    """Save up to 20 mismatching inputs under ``.robustness/``, print ``lines``, the reference's outcomes and the
    mismatches; exit status 1 when any input read differently."""
    out = REPO / ".robustness"
    for i, data in enumerate(tally.bad[:20]):
        out.mkdir(exist_ok=True)
        (out / f"mismatch{i}{suffix}").write_bytes(data)
    mismatches = tally.counts["MISMATCH"]
    print(lines[0])
    print(f"outcomes of the reference: {dict(tally.counts - collections.Counter({'MISMATCH': mismatches}))}")
    for line in lines[1:]:
        print(line)
    print(f"mismatches: {mismatches}")
    return 1 if mismatches else 0
