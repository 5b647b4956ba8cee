"""XLA FLOPs from the capture's HLO: ours against the truth and the stock tool, and what reading them costs (issue #20).

    python benchmarks/xla_flops.py [--logdir ../shared/profiles/real-h100-jax] [--reps 7] [--no-stock]
                                   [--extra ../shared/profiles/v100_bert_8gpu_tf24.xplane.pb]

For each run of the logdir (the real H100 JAX captures and their ``TRUTH.json``):

* ours: the train-step module's FLOPs per execution (``Trace.flop_ops`` rows of ``jit_train_step``, times their
  ``repeats``) times its executions per step (``<module>:XLA GPU module`` host events over ``train`` step markers);
* truth: ``executed_matmul_flops_per_step`` and ``model_flops_per_step`` of ``TRUTH.json``;
* stock: xprof's ``op_profile`` (``xspace_to_tool_data``, run on a temporary copy: it writes caches beside its
  input): the program's ``rawFlops`` over the module's executions in the capture; "-" where it gives none (a
  CUDA-graph capture: its kernels name no HLO op, so the tool attributes no FLOPs);
* cost: CPU time of ``read_trace`` with the HLO step and with it stubbed out (interleaved, min of ``--reps``).

Why differences are expected: docs/xla-flops.md.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)

from tb_gpu_advisor.formats.xplane import adapter
from tb_gpu_advisor.frameworks import xla

MODULE = "jit_train_step"


def capture(logdir: str, run: str) -> str | None:
    found = sorted(glob.glob(os.path.join(logdir, run, "plugins", "profile", "*", "*.xplane.pb")))
    return found[0] if found else None


def ours(path: str) -> tuple[float | None, float | None, dict[str, float]]:
    """(FLOPs per execution of the train step, its executions per step, FLOPs per op) from our trace."""
    t = adapter.read_trace(path)
    fo = t.flop_ops
    if fo is None:
        return None, None, {}
    reps = fo.repeats if fo.repeats is not None else [1] * len(fo)
    per_op = {o: float(f) * r for m, o, f, r in zip(fo.module, fo.op_name, fo.flops, reps) if m == MODULE}
    h = t.h
    execs = int(h.name_mask(lambda n: n == MODULE + xla.GPU_MODULE_SUFFIX).sum())
    steps = int(h.name_mask(lambda n: n == "train").sum())
    return (sum(per_op.values()) if per_op else None), (execs / steps if steps else None), per_op


def stock(path: str, executions: int) -> tuple[float | None, dict[str, float]]:
    """(train-step FLOPs per execution, per op) from xprof's op_profile; None where it gives none."""
    from xprof.convert.raw_to_tool_data import xspace_to_tool_data

    with tempfile.TemporaryDirectory() as tmp:
        dst = os.path.join(tmp, os.path.basename(path))
        shutil.copy(path, dst)
        raw, _ = xspace_to_tool_data([dst], "op_profile", {"use_saved_result": False})
    prog = next((p for p in json.loads(raw)["byProgram"].get("children", []) if p["name"].split("(")[0] == MODULE), None)
    if prog is None or not executions:
        return None, {}
    per_op = {op["name"]: op["metrics"].get("rawFlops", 0) / executions
              for cat in prog.get("children", []) for op in cat.get("children", []) if op["metrics"].get("rawFlops")}
    return prog["metrics"].get("rawFlops", 0) / executions, per_op


def read_cost(path: str, reps: int) -> tuple[float, float]:
    """(ms with the HLO step, ms without): CPU time of read_trace, min over ``reps`` interleaved runs."""
    real = adapter.hlo_work
    with_, without = [], []
    for _ in range(reps):
        for stub, out in ((False, with_), (True, without)):
            adapter.hlo_work = (lambda meta: (None, None, {})) if stub else real
            t = time.process_time()
            adapter.read_trace(path)
            out.append(time.process_time() - t)
    adapter.hlo_work = real
    return min(with_) * 1e3, min(without) * 1e3


def module_executions(path: str) -> int:
    t = adapter.read_trace(path)
    return int(t.h.name_mask(lambda n: n == MODULE + xla.GPU_MODULE_SUFFIX).sum())


def _g(v: float | None) -> str:
    return f"{v / 1e12:.3f}" if v else "-"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--logdir", default=os.path.join(REPO, "..", "shared", "profiles", "real-h100-jax"))
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--no-stock", action="store_true")
    ap.add_argument("--extra", nargs="*", default=[os.path.join(REPO, "..", "shared", "profiles", "v100_bert_8gpu_tf24.xplane.pb")],
                    help="more files to time (no truth)")
    args = ap.parse_args()
    with open(os.path.join(args.logdir, "TRUTH.json")) as f:
        truth = json.load(f)
    print("| run | ours TFLOP/step | executed truth | ours/truth | model truth | stock TFLOP/step | stock/ours | "
          "read ms (HLO) | read ms (no HLO) |")
    print("|---|---|---|---|---|---|---|---|---|")
    op_diffs = []
    for run in sorted(truth):
        path = capture(args.logdir, run)
        if path is None:
            continue
        per_exec, per_step, per_op = ours(path)
        mine = per_exec * per_step if per_exec and per_step else None
        t = truth[run]
        ex, model = t.get("executed_matmul_flops_per_step"), t.get("model_flops_per_step")
        st = None
        if not args.no_stock and per_exec:
            execs = module_executions(path)
            st_exec, st_ops = stock(path, execs)
            st = st_exec * per_step if st_exec and per_step else None
            op_diffs += [(run, op, per_op.get(op, 0.0), f) for op, f in st_ops.items()
                         if abs(f - per_op.get(op, 0.0)) > 0.01 * max(f, 1.0)]
        w, wo = read_cost(path, args.reps)
        print(f"| {run} | {_g(mine)} | {_g(ex)} | {mine / ex:.3f} |" if mine and ex else f"| {run} | {_g(mine)} | {_g(ex)} | - |",
              f"{_g(model)} | {_g(st)} | {st / mine:.2f} |" if st and mine else f"{_g(model)} | {_g(st)} | - |",
              f"{w:.1f} | {wo:.1f} |")
    for path in args.extra:
        if os.path.isfile(path):
            w, wo = read_cost(path, args.reps)
            print(f"| {os.path.basename(path)} | - | - | - | - | - | - | {w:.1f} | {wo:.1f} |")
    if op_diffs:
        print("\nOps where the stock tool's FLOPs per execution differ from ours by over 1%:\n")
        print("| run | HLO op | ours GFLOP | stock GFLOP |\n|---|---|---|---|")
        for run, op, a, b in op_diffs:
            print(f"| {run} | {op} | {a / 1e9:.3f} | {b / 1e9:.3f} |")


if __name__ == "__main__":
    main()
