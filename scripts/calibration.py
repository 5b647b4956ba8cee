"""The saving calibration table of docs/diff.md: predicted vs realised step-time savings on known before/after pairs.

Why: a diff shows the saving each fixed finding predicted next to the realised change; this table collects
that comparison over every rule with a saving (synthetic pairs, fix known by construction) and over real
H100 pairs that differ in one known way, so the estimates stay accountable (issue #11).

Usage::

    python scripts/calibration.py [--real DIR] [--only-real | --only-synthetic]

DIR: a logdir of real captures (default ``../shared/profiles/real-h100-{jax,torch}``; pairs whose runs are missing are
skipped).  Prints a Markdown table; exit 1 when a row is off by more than ``diff.calibration_tolerance`` or a
synthetic pair does not report its rule fixed.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from synthetic.calibration import as_markdown, real_rows, synthetic_rows  # noqa: E402

DEFAULT_REAL = [str(REPO.parent / "shared" / "profiles" / s) for s in ("real-h100-jax", "real-h100-torch")]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--real", action="append", default=None,
                    help="logdir of real captures; repeat for several (default: the real H100 JAX and PyTorch sets)")
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--only-real", action="store_true")
    group.add_argument("--only-synthetic", action="store_true")
    args = ap.parse_args(argv)
    os.environ.setdefault("TB_GPU_ADVISOR_CACHE_DIR", "off")
    t0 = time.perf_counter()
    rows = []
    if not args.only_real:
        with tempfile.TemporaryDirectory() as tmp:
            rows += synthetic_rows(tmp)
    if not args.only_synthetic:
        real = [r for d in (args.real or DEFAULT_REAL) for r in real_rows(d)]
        if not real:
            print(f"note: no real pair found in {args.real}", file=sys.stderr)
        rows += real
    print(as_markdown(rows))
    bad = [r.pair for r in rows if r.within is False or r.expected_fixed is False]
    print(f"\n{len(rows)} pairs, {len(rows) - len(bad)} calibrated"
          + (f"; off: {', '.join(bad)}" if bad else "") + f" ({time.perf_counter() - t0:.1f} s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
