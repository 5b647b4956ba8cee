"""CPU seconds of ``analyze_session`` by stage over a fixed mix of captures, one checkout against another.

    python benchmarks/analysis_mix.py [--before CHECKOUT] [--runs 3] [--sets shared,wild,generated] [--scratch DIR]

Why: the test suite analyses hundreds of captures and the product promises a whole report faster than protobuf
parses the file, so what one analysis costs, summed over a mix of every format, is the number to cut.  The mix:

* ``shared``: every run of ``../shared/profiles`` (real H100 JAX and PyTorch captures, public PyTorch traces, Nsight
  exports), where that folder exists;
* ``wild``: every run of ``tests/fixtures/wild`` (public traces of other people's jobs, every format);
* ``generated``: the synthetic corpus (``tests/support/corpus.py``: TensorFlow, JAX, PyTorch scenarios) plus every
  memory-snapshot scenario and five Nsight exports, written once under ``--scratch``.

Each checkout runs in its own fresh process (``PYTHONPATH`` = that checkout, nothing cached), analysing every
session of the mix in turn (``analyze_session`` then the report's JSON text, as ``report --format json`` writes it);
``--before`` runs first, then this tree, then again, alternating for ``--runs`` rounds so both see the same load.
CPU is ``time.process_time`` (on a shared 2-core machine the wall clock moves with other people's load, CPU seconds
far less); each stage is the pipeline's own entry point, wrapped without editing it, inclusive of what it calls and
counted once where a stage re-enters itself.  The table gives the minimum over rounds of each stage's sum.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SHARED = os.path.join(os.path.dirname(REPO), "shared", "profiles")

#: (module, attribute, label): the pipeline's stages, in order; each wrapped in the child.
STAGES = (
    ("tb_gpu_advisor.formats", "read", "read (formats: file -> trace model)"),
    ("tb_gpu_advisor.runtime.pipeline", "device_launches", "launch correlation"),
    ("tb_gpu_advisor.runtime.pipeline", "detect_job", "job"),
    ("tb_gpu_advisor.runtime.pipeline", "detect_steps", "steps"),
    ("tb_gpu_advisor.runtime.pipeline", "compute_host_metrics", "metrics"),
    ("tb_gpu_advisor.rules", "evaluate", "rules"),
    ("tb_gpu_advisor.runtime.pipeline", "build_host_report", "report (tables)"),
    ("tb_gpu_advisor.runtime.pipeline", "merge_hosts", "report (session merge)"),
)

_CHILD = r"""
import json, os, sys, time, importlib
stages, roots = json.loads(sys.argv[1]), json.loads(sys.argv[2])
from tb_gpu_advisor.discover.logdir import discover
import tb_gpu_advisor.runtime.pipeline as pipeline
cpu = {}
def wrap(fn, label):
    depth = [0]
    def inner(*a, **k):
        depth[0] += 1
        c = time.process_time()
        try:
            return fn(*a, **k)
        finally:
            depth[0] -= 1
            if depth[0] == 0:
                cpu[label] = cpu.get(label, 0.0) + time.process_time() - c
    return inner
for mod, attr, label in stages:
    m = importlib.import_module(mod)
    if getattr(m, attr, None) is not None:
        setattr(m, attr, wrap(getattr(m, attr), label))
sessions = []
c = time.process_time()
for root in roots:
    seen = set()
    for s in discover(root):
        if s.run not in seen:  # the newest session of each run, as `report` picks
            seen.add(s.run)
            sessions.append(s)
cpu["discover"] = time.process_time() - c
c0 = time.process_time()
errors = 0
for s in sessions:
    try:
        r = pipeline.analyze_session(s.run, s.session, s.hosts, rank_runs=s.linked_ranks)
    except Exception:
        errors += 1
        continue
    c = time.process_time()
    r.to_json(indent=2)
    cpu["report (JSON text)"] = cpu.get("report (JSON text)", 0.0) + time.process_time() - c
cpu["whole analysis"] = time.process_time() - c0
print(json.dumps({"cpu": cpu, "sessions": len(sessions), "errors": errors}))
"""


def generated(scratch: str) -> list[str]:
    """The generated logdirs under ``scratch`` (written once; reused when present)."""
    out = os.path.join(scratch, "generated")
    done = os.path.join(out, ".done")
    if not os.path.exists(done):
        sys.path[:0] = [REPO]
        from pathlib import Path

        from synthetic import memsnapshot, nsysexport
        from tests.support import corpus

        for name in ("corpus_tf", "corpus_jax", "corpus_torch"):
            corpus._write(name, Path(out) / name)
        for name, make in memsnapshot.SCENARIOS.items():
            os.makedirs(os.path.join(out, "snapshots", name), exist_ok=True)
            memsnapshot.write(os.path.join(out, "snapshots", name, "snapshot.pickle"), make().doc)
        writers = (nsysexport.write, nsysexport.write_retraced_loop, nsysexport.write_marked_input_loop,
                   nsysexport.write_loader_thread_batches, nsysexport.write_interleaved_evaluation)
        for i, write in enumerate(writers):
            os.makedirs(os.path.join(out, "nsys", f"n{i}"), exist_ok=True)
            write(os.path.join(out, "nsys", f"n{i}", "loop.sqlite"))
        open(done, "w").close()
    return [os.path.join(out, d) for d in sorted(os.listdir(out)) if not d.startswith(".")]


def roots(sets: list[str], scratch: str) -> list[str]:
    """The logdirs of the mix ``sets``."""
    out: list[str] = []
    if "shared" in sets and os.path.isdir(SHARED):
        out += [os.path.join(SHARED, d) for d in ("real-h100-jax", "real-h100-torch", "wild-torch", "nsys")
                if os.path.isdir(os.path.join(SHARED, d))]
    if "wild" in sets:
        out.append(os.path.join(REPO, "tests", "fixtures", "wild"))
    if "generated" in sets:
        out += generated(scratch)
    return out


def child(tree: str, logdirs: list[str]) -> dict:
    """One fresh process of checkout ``tree`` over ``logdirs``: its stage CPU seconds."""
    env = dict(os.environ, PYTHONPATH=tree, TB_GPU_ADVISOR_CACHE_DIR="off")
    p = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(STAGES), json.dumps(logdirs)], env=env, cwd=tree,
                       capture_output=True, text=True, check=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def table(results: dict[str, list[dict]]) -> str:
    """Markdown: each stage's minimum CPU over rounds, per checkout (and the change where there are two)."""
    names = list(results)
    labels = ["discover"] + [s[2] for s in STAGES] + ["report (JSON text)", "whole analysis"]
    head = "| stage (CPU s, min of rounds) | " + " | ".join(names) + (" | change |" if len(names) == 2 else " |")
    lines = [head, "|---|" + "---:|" * (len(names) + (len(names) == 2))]
    for label in labels:
        got = [min(r["cpu"].get(label, 0.0) for r in results[n]) for n in names]
        row = f"| {'**' + label + '**' if label == 'whole analysis' else label} | " + " | ".join(f"{g:.2f}" for g in got)
        if len(names) == 2:
            row += f" | {100 * (got[1] - got[0]) / got[0]:+.0f}% |" if got[0] else " | |"
        else:
            row += " |"
        lines.append(row)
    first = results[names[0]][0]
    lines.append(f"\n{first['sessions']} sessions, {first['errors']} failed; stages nest (metrics holds the rules' "
                 "context, not the rules), so they do not sum to the whole.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", help="another checkout (e.g. the base commit), measured in the same rounds")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sets", default="shared,wild,generated")
    ap.add_argument("--scratch", default=os.path.join(tempfile.gettempdir(), "tb_gpu_advisor_analysis_mix"))
    a = ap.parse_args(argv)
    logdirs = roots(a.sets.split(","), a.scratch)
    trees = {"before": a.before, "this tree": REPO} if a.before else {"this tree": REPO}
    results: dict[str, list[dict]] = {n: [] for n in trees}
    for _ in range(a.runs):
        for name, tree in trees.items():
            results[name].append(child(os.path.abspath(tree), logdirs))
    print(table(results))


if __name__ == "__main__":
    main()
