"""What the rules' context (``rules.base.Ctx``: the host's framework as it talks to its job) costs an analysis.

    python benchmarks/rule_context.py [--tree OTHER_CHECKOUT] [--runs 3] [LOGDIR:RUN ...]

Each row is one session analysed in fresh processes (``analyze_session``, nothing cached, in-process): the CPU
seconds of the analysis (``time.process_time``: on a shared machine the wall clock moves with other people's load,
CPU seconds less) and of the rules' context's asks for the host's framework as its job hears it
(``rules.base.framework``, timed around each call, no profiler: cProfile inflated its many small calls 5-15x), with
their count; medians of ``--runs``.  ``--tree`` runs the same rows with another checkout first (PYTHONPATH), e.g. the
base commit, so the two columns are measured in the same minute.  Without LOGDIR:RUN the largest shared captures are
used.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(REPO), "shared", "profiles")
DEFAULT = ("real-h100-jax:gpt_big", "real-h100-torch:torch_tiny_ops", "nsys:fsdp_mfu_before",
           "real-h100-jax:launch_bound_eager", "wild-torch:resnet50_num_workers_0")

_CHILD = r"""
import json, sys, time
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.rules import base
from tb_gpu_advisor.runtime.pipeline import analyze_session
spent = [0.0, 0]
asked = base.framework
def framework(m, *vendor):
    c = time.process_time()
    try:
        return asked(m, *vendor)
    finally:
        spent[0] += time.process_time() - c
        spent[1] += 1
base.framework = framework  # every Ctx asks through the module's name
logdir, run = sys.argv[1], sys.argv[2]
(s,) = [s for s in discover(logdir) if s.run == run][:1]
c0 = time.process_time()
analyze_session(s.run, s.session, s.hosts, rank_runs=s.linked_ranks)
cpu = time.process_time() - c0
print(json.dumps({"cpu_s": cpu, "ctx_s": spent[0], "asks": spent[1]}))
"""


def _child(tree: str, logdir: str, run: str) -> dict:
    env = dict(os.environ, PYTHONPATH=tree, TB_GPU_ADVISOR_CACHE_DIR="off")
    p = subprocess.run([sys.executable, "-c", _CHILD, logdir, run], env=env, cwd=tree, capture_output=True, text=True,
                       check=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def _row(tree: str, logdir: str, run: str, runs: int) -> str:
    """"CPU s, framework ms (share), asks": medians over ``runs`` fresh processes."""
    got = [_child(tree, logdir, run) for _ in range(runs)]
    cpu = statistics.median(g["cpu_s"] for g in got)
    ctx = statistics.median(g["ctx_s"] for g in got)
    return f"{cpu:.3f}, {1000 * ctx:.1f} ms ({100 * ctx / cpu:.1f}%), {got[0]['asks']}"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("sets", nargs="*", default=list(DEFAULT), help="LOGDIR:RUN (a LOGDIR without / is under shared)")
    ap.add_argument("--tree", help="another checkout measured first (its column: before)")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args(argv)
    trees = ([a.tree] if a.tree else []) + [REPO]
    head = "| session | " + " | ".join(f"{'before' if a.tree and i == 0 else 'this tree'}: CPU s, framework(), asks"
                                        for i in range(len(trees))) + " |"
    print(head)
    print("|---|" + "---|" * len(trees))
    for item in a.sets:
        logdir, _, run = item.rpartition(":")
        logdir = logdir if "/" in logdir else os.path.join(SHARED, logdir)
        cells = [_row(tree, logdir, run, a.runs) for tree in trees]
        print(f"| {run} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
