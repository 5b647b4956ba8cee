"""Memory-snapshot reports, one checkout against another: the CPU of ``report`` of every kept real snapshot
(``tests/fixtures``) and of generated ones (a ``synthetic.memsnapshot.write_large`` history of ``--entries``, and the
``fragmented`` scenario pickled at protocol 0, a text pickle), each tree in its own fresh process (one per tree and repeat, reporting every file in turn).  Prints
one markdown table: per file its size, each tree's CPU seconds (the least of ``--repeat`` runs; the report only, after
a warm-up report of a small generated snapshot, so imports and first calls are not counted; CPU of the process), the ratio, and whether
the two reports' JSON is the same byte for byte (but for ``generated_at``).  Not a test: no timing is asserted anywhere.

    python benchmarks/snapshot_trees.py --base /path/to/other/checkout [--entries 200000] [--repeat 3]
        [--cache /tmp/snapshot_trees] [--only SUBSTRING]

``--base``: a checkout (its compiled extensions built) to compare with this one (``git worktree add`` of the base
commit, or ``git archive`` of it with the ``.so`` files copied in).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

_CHILD = r"""
import contextlib, io, json, os, sys, time
sys.path.insert(0, {repo!r})
from tb_gpu_advisor.cli.main import main
def report(path):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        main(["report", path, "--format", "json"])
    return out.getvalue()
report({warm!r})
for path in {paths!r}:
    t = time.process_time()
    text = report(path)
    cpu = time.process_time() - t
    text = "\n".join(x for x in text.splitlines() if '"generated_at"' not in x)  # the clock's, not the analysis's
    print(json.dumps({{"cpu": cpu, "out": text}}), flush=True)
"""


def _tree(repo: str, paths: list[str], warm: str) -> list[tuple[float, str]]:
    """One fresh process of ``repo``'s code reporting ``paths`` in turn: (CPU s, JSON) each."""
    env = {**os.environ, "TB_GPU_ADVISOR_CACHE_DIR": "off", "PYTHONPATH": repo}
    p = subprocess.run([sys.executable, "-c", _CHILD.format(repo=repo, paths=paths, warm=warm)], capture_output=True,
                       text=True, env=env, cwd=repo, check=True)
    return [(got["cpu"], got["out"]) for got in map(json.loads, p.stdout.strip().splitlines())]


def _generated(cache: str, entries: int) -> list[str]:
    sys.path.insert(0, REPO)
    from synthetic import memsnapshot as ms

    os.makedirs(cache, exist_ok=True)
    large = os.path.join(cache, f"write_large_{entries}.pickle")
    if not os.path.exists(large):
        ms.write_large(large, entries)
    text = os.path.join(cache, "fragmented_protocol0.pickle")
    if not os.path.exists(text):
        ms.write(text, ms.fragmented().doc, 0)
    return [large, text]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="the other checkout")
    ap.add_argument("--entries", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "snapshot_trees"))
    ap.add_argument("--only", default="", help="files whose path holds this")
    args = ap.parse_args(argv)
    kept = sorted(glob.glob(os.path.join(REPO, "tests/fixtures/**/*.pickle*"), recursive=True))
    files = [f for f in kept + _generated(args.cache, args.entries) if args.only in f]
    warm = os.path.join(args.cache, "warm.pickle")
    if not os.path.exists(warm):
        from synthetic import memsnapshot as ms

        ms.write(warm, ms.SCENARIOS["fragmented"]().doc)
    print(f"base: {args.base}\nbranch: {REPO}\n")
    print("| snapshot | bytes | base CPU s | branch CPU s | base / branch | same JSON |")
    print("|---|---:|---:|---:|---:|---|")
    totals = [0.0, 0.0]
    runs = {tree: [_tree(tree, files, warm) for _ in range(args.repeat)] for tree in (args.base, REPO)}
    for k, path in enumerate(files):
        cpu = [min(run[k][0] for run in runs[tree]) for tree in (args.base, REPO)]
        same = len({run[k][1] for tree in runs for run in runs[tree]}) == 1
        totals = [totals[0] + cpu[0], totals[1] + cpu[1]]
        name = os.path.relpath(path, REPO) if path.startswith(REPO) else os.path.basename(path)
        print(f"| {name} | {os.path.getsize(path):,} | {cpu[0]:.3f} | {cpu[1]:.3f} | {cpu[0] / max(cpu[1], 1e-9):.1f}x "
              f"| {'yes' if same else 'NO'} |")
    print(f"| all {len(files)} | | {totals[0]:.2f} | {totals[1]:.2f} | {totals[0] / max(totals[1], 1e-9):.1f}x | |")
    print(f"\nload average: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
