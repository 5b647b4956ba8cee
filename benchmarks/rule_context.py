"""What the rules' context (``rules.base.Ctx``: the host's framework as it talks to its job) costs an analysis.

    python benchmarks/rule_context.py [--tree OTHER_CHECKOUT] [--runs 3] [LOGDIR:RUN ...]

Each row is one session analysed in a fresh process (``analyze_session``, nothing cached), its CPU seconds
(the process's and its reaped children's: a file may be read in a child; on a shared machine the wall clock moves
with other people's load, CPU seconds less) and, under cProfile in another fresh process, how often the rules' context asked for the adapted framework
(``rules.base.framework``) and the share of the analysis it took.  ``--tree`` runs the same rows with another checkout
first (PYTHONPATH), e.g. the base commit, so the two columns are measured in the same minute; the median of
``--runs`` is printed.  Without LOGDIR:RUN the largest shared captures are used.
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
import cProfile, json, pstats, resource, sys, time
def cpu():
    return sum(r.ru_utime + r.ru_stime for r in (resource.getrusage(resource.RUSAGE_SELF),
                                                  resource.getrusage(resource.RUSAGE_CHILDREN)))
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.runtime.pipeline import analyze_session
logdir, run, profile = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
(s,) = [s for s in discover(logdir) if s.run == run][:1]
pr = cProfile.Profile(time.process_time) if profile else None
c0 = cpu()
if pr: pr.enable()
analyze_session(s.run, s.session, s.hosts, rank_runs=getattr(s, "linked_ranks", None))
if pr: pr.disable()
out = {"cpu_s": cpu() - c0}
if pr:
    st = pstats.Stats(pr).stats
    total = sum(v[2] for v in st.values())
    hit = [v for k, v in st.items() if k[2] == "framework" and k[0].endswith("rules/base.py")]
    out.update(asks=sum(v[1] for v in hit), share=sum(v[3] for v in hit) / total if total else 0.0)
print(json.dumps(out))
"""


def _child(tree: str, logdir: str, run: str, profile: bool) -> dict:
    env = dict(os.environ, PYTHONPATH=tree, TB_GPU_ADVISOR_CACHE_DIR="off")
    p = subprocess.run([sys.executable, "-c", _CHILD, logdir, run, "1" if profile else "0"], env=env, cwd=tree,
                       capture_output=True, text=True, check=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def _row(tree: str, logdir: str, run: str, runs: int) -> tuple[float, dict]:
    cpu = statistics.median(_child(tree, logdir, run, False)["cpu_s"] for _ in range(runs))
    return cpu, _child(tree, logdir, run, True)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("sets", nargs="*", default=list(DEFAULT), help="LOGDIR:RUN (a LOGDIR without / is under shared)")
    ap.add_argument("--tree", help="another checkout measured first (its column: before)")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args(argv)
    trees = ([a.tree] if a.tree else []) + [REPO]
    head = "| session | " + " | ".join(f"{'before' if a.tree and i == 0 else 'this tree'}: CPU s, asks, share"
                                        for i in range(len(trees))) + " |"
    print(head)
    print("|---|" + "---|" * len(trees))
    for item in a.sets:
        logdir, _, run = item.rpartition(":")
        logdir = logdir if "/" in logdir else os.path.join(SHARED, logdir)
        cells = []
        for tree in trees:
            cpu, prof = _row(tree, logdir, run, a.runs)
            cells.append(f"{cpu:.2f}, {prof['asks']}, {100 * prof['share']:.1f}%")
        print(f"| {run} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
