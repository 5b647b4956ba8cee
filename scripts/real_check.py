"""One table of how the Advisor does on a set of real GPU captures with known problems (issue #9).

Why: ``tests/crosscheck/test_real_h100_jax.py`` says pass/fail per check; this shows the
whole set at once with the numbers (truth, ours, stock) side by side, for
issue updates and for judging a change.  The checks are the test module's own
(``tests/support/real_checks.py``, which follows ``../shared/tools/score_real.py``).

Usage::

    python scripts/real_check.py [--set DIR]     # or: make real-check [SET=DIR]

DIR is a logdir holding TRUTH.json (default ``../shared/profiles/real-h100-jax``);
any set in that format works (e.g. a future PyTorch set) as far as the CLI reads
its captures.  Exit 1 when any check fails, 0 otherwise.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.real_checks import (  # noqa: E402
    CHECKS,
    REAL_JAX_SET,
    Check,
    check_stock,
    gpu_step_ms,
    load_truth,
    our_report,
    stock_available,
    stock_step_for_run,
    top_finding,
    truth_checks,
)


def _ms(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


def _table(rows: list[list[str]]) -> str:
    """Plain left-aligned columns (no dependency for a table)."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", dest="set_dir", type=Path, default=REAL_JAX_SET,
                    help=f"logdir with TRUTH.json (default {os.path.relpath(REAL_JAX_SET)})")
    ap.add_argument("--no-stock", action="store_true", help="skip the stock xprof cross-check")
    args = ap.parse_args(argv)
    # before xprof is first imported (stock_available): silences its C++ info log, hundreds of lines
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if not (args.set_dir / "TRUTH.json").is_file():
        print(f"real_check: no TRUTH.json in {args.set_dir}", file=sys.stderr)
        return 2
    truth = load_truth(args.set_dir)
    runs = sorted(truth)
    t0 = time.monotonic()
    stock: dict[str, Future] = {}
    use_stock = not args.no_stock and stock_available()
    with ProcessPoolExecutor(2) as pool:
        if use_stock:  # the stock converter runs in workers while this process analyses
            stock = {r: pool.submit(stock_step_for_run, (str(args.set_dir), r)) for r in runs}
        results = {r: our_report(args.set_dir, r) for r in runs}
        t_ours = time.monotonic() - t0
        stock_res = {r: f.result()[1:] for r, f in stock.items()}
    t_all = time.monotonic() - t0

    header = ["run", "injected (expect_top)", "truth ms", "ours ms", "stock ms", "ours/stock", "our top", *CHECKS]
    rows, why, right, stock_ok, stock_n, failed = [header], [], 0, 0, 0, False
    for run in runs:
        t, res = truth[run], results[run]
        stock_ms, stock_why = stock_res.get(run, (None, "--no-stock" if args.no_stock
                                                  else "stock converter (xprof) not installed"))
        injected = "|".join(t.get("expect_top") or []) or "healthy"
        if res.report is None:
            failed = True
            rows.append([run, injected, _ms(t.get("device_step_ms")), "-", _ms(stock_ms), "-", "ERROR",
                         *["FAIL"] * (len(CHECKS) - 1), "n/a" if stock_ms is None else "FAIL"])
            why.append(f"{run}: no report: {res.error}")
            continue
        checks: dict[str, Check] = truth_checks(t, res.report)
        checks["stock"] = check_stock(res.report, stock_ms, stock_why)
        ours = gpu_step_ms(res.report)
        ratio = f"{ours / stock_ms:.3f}" if ours is not None and stock_ms else "-"
        rows.append([run, injected, _ms(t.get("device_step_ms")), _ms(ours), _ms(stock_ms), ratio,
                     top_finding(res.report) or "healthy", *(checks[c].mark for c in CHECKS)])
        right += all(c.ok is not False for n, c in checks.items() if n != "stock")
        if checks["stock"].ok is not None:
            stock_n += 1
            stock_ok += bool(checks["stock"].ok)
        bad = [c for c in checks.values() if c.ok is False]
        failed |= bool(bad)
        why += [f"{run} [{c.name}]: {c.detail}" for c in bad]
        if bad:
            why[-1] += f"  -- truth: {t.get('note', '')}"
    print(_table(rows))
    if why:
        print("\nfailures:\n  " + "\n  ".join(why))
    print(f"\nour analysis {t_ours:.1f} s; wall with the stock converter in 2 workers {t_all:.1f} s")
    print(f"{right}/{len(runs)} runs right on every check; stock cross-check: {stock_ok}/{stock_n} within 10%")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
