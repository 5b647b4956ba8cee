#!/usr/bin/env python
"""Hostile launch configurations through both decoders of each format that records them (issue #38 deliverable 6):
Kineto kernels' ``grid``/``block`` (the compiled scanner's ``scan_dims`` against the typed decode's
``launch_count``) and XPlane ``kernel_details`` strings (both XPlane decoders, then the adapter's parse).

    python scripts/launch_fuzz_equal.py --seconds 120 --seed 5
    PYTHONMALLOC=malloc LD_PRELOAD=$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0 \\
        python scripts/launch_fuzz_equal.py --seconds 300     # on a build with -fsanitize=address

Half the time budget goes to each format.  Kineto: small traces of kernels whose values come from
``tests.support.hostile_launch.kineto_trace`` (wrong types, nested and deep arrays, past int32/int64 and a float's
range, exponents, ``-0``, cut short, keys twice), each read by both paths in chunks of 512 bytes and of the default
size; the two results (a KinetoTrace, field by field, or the error, word for word) must be equal, each chunk is
also handed to the scanner as a copy of its exact size (a read past it is one AddressSanitizer sees), and every
launch count must be -1 or in [0, int32 max].  XPlane: a GPU plane of kernels whose ``kernel_details`` come from
``hostile_launch.kernel_details``, read by both decoders, then ``adapter.device_events`` on each: the launch
columns must be equal, in range, and no error may escape.  Mismatches are saved under ``.robustness/``."""

from __future__ import annotations

import collections
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "scripts")]

import fuzzloop  # noqa: E402

from tb_gpu_advisor.formats.kineto import _cscan  # noqa: E402
from tests.support import hostile_launch  # noqa: E402
from tests.support.kineto_paths import differences as kineto_differences  # noqa: E402
from tests.support.kineto_paths import read_both as kineto_read_both  # noqa: E402
from tests.support.xplane_paths import differences as xplane_differences  # noqa: E402
from tests.support.xplane_paths import read_with as xplane_read_with  # noqa: E402


class _ExactCopies:
    """The scanner, given each chunk as a copy of its exact size (numpy's malloc'd buffer: a read past the chunk
    is a read past the allocation, which AddressSanitizer reports); counts what it answered."""

    def __init__(self, counts: collections.Counter) -> None:
        self.counts = counts

    def scan(self, data):
        out = _cscan.scan(np.frombuffer(data, np.uint8).copy())
        self.counts["scanned" if out else "handed back" if out is None else "cut inside an event"] += 1
        return out

    def op_keys(self, data, spans):
        return _cscan.op_keys(np.frombuffer(data, np.uint8).copy(), spans)


def check_kineto(data: bytes, small: bool, tally: fuzzloop.Tally) -> None:
    """Both Kineto paths on one trace, in small chunks or the default ones."""
    fast, ref = kineto_read_both(data, chunk_bytes=512 if small else None)
    bad = bool(kineto_differences(fast, ref)) or not (isinstance(fast, Exception) or fast.blocks is None
                                                     or hostile_launch.counts_in_range(fast.blocks, fast.threads))
    tally.record(data, fuzzloop.outcome(ref, "KinetoTrace"), bad)


def check_xplane(data: bytes, tally: fuzzloop.Tally) -> None:
    """Both XPlane decoders and the adapter on one file: equal timelines, equal in-range launch columns, no error."""
    fast, ref = (hostile_launch.xplane_launch_columns(c, data) for c in (True, False))
    errs = isinstance(fast, Exception) or isinstance(ref, Exception)
    bad = errs or fast != ref or not all(hostile_launch.counts_in_range(*g[1:]) for g in ref)
    if not errs:
        bad = bad or bool(xplane_differences(xplane_read_with(True, data, None), xplane_read_with(False, data, None)))
    tally.record(data, type(ref).__name__ if isinstance(ref, Exception) else "launch columns", bad)


def main() -> int:
    a, rng = fuzzloop.options(__doc__)
    counts: collections.Counter[str] = collections.Counter()
    sys.modules["tb_gpu_advisor.formats.kineto"]._cscan = _ExactCopies(counts)  # read_both imports it from here
    kineto, xplane = fuzzloop.Tally(), fuzzloop.Tally()
    n_k = n_x = 0
    end = time.monotonic() + a.seconds / 2
    while time.monotonic() < end:
        check_kineto(hostile_launch.kineto_trace(rng), n_k % 2 == 0, kineto)
        n_k += 1
    end = time.monotonic() + a.seconds / 2
    while time.monotonic() < end:
        check_xplane(hostile_launch.xplane_file([hostile_launch.kernel_details(rng) for _ in range(rng.randint(1, 6))]), xplane)
        n_x += 1
    status = fuzzloop.finish(kineto, ".pt.trace.json", [
        f"Kineto: {n_k} traces (seed {a.seed}), each read by both paths", f"chunks through the scanner: {dict(counts)}"])
    return fuzzloop.finish(xplane, ".xplane.pb", [
        f"XPlane: {n_x} files of hostile kernel_details, each read by both decoders and the adapter"]) or status


if __name__ == "__main__":
    sys.exit(main())
