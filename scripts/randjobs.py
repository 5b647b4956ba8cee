"""Random jobs through the whole analysis for a time budget (h37-randjobs): every report law walked on each.

Each seed is one job of ``synthetic.randjobs`` (Kineto ranks, Nsight exports, windows with no GPU work; with
``--xplane``, JAX and TF XPlane captures and PyTorch memory snapshots; with ``--forms``, the forms of the newer real
captures: lost GPU records, OS-runtime-traced host loops, XLA's host-run loops, programs called once each; with ``--forms5``,
AMD's tracers, NVTX-only exports, blocking copies, tiny host-bound steps, a slower GPU, a snapshot beside a trace; with
``--forms9``, an NCCL all-to-all of each kind of exchange; with ``--forms10``, attention op by op or fused, a pipeline's
own input preparation, a JAX batch-fetch range, a PyProf forward; with ``--forms11``, libraries' NVTX vocabularies, native loops syncing outside any op, one
unmarked pass, a kernel trace with no host), analysed
in-process and held to ``tests/support/random_jobs.laws_broken``.  Prints each job that breaks a law (its seed, the
job to rebuild it with, the laws), then how many jobs ran and how many broke which law.

    PYTHONPATH=. TB_GPU_ADVISOR_CACHE_DIR=off python scripts/randjobs.py --seconds 600 --seed 1000
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from synthetic.randjobs import (random_form5_job, random_form7_job, random_form8_job, random_form9_job,  # noqa: E402
                              random_form10_job, random_form11_job, random_form_job, random_job, random_xplane_job)
from tests.support.random_jobs import check  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="time budget (default 60)")
    ap.add_argument("--seed", type=int, default=0, help="the first job's seed; the next jobs take the next seeds")
    ap.add_argument("--jobs", type=int, default=0, help="stop after this many jobs (0: the time budget only)")
    ap.add_argument("--xplane", action="store_true",
                    help="draw JAX/TF XPlane jobs and memory snapshots (random_xplane_job) instead of Kineto/Nsight")
    ap.add_argument("--forms", action="store_true",
                    help="draw the forms newer real captures show (random_form_job): GPU records lost mid-window or "
                         "at the tail, OS-runtime-traced host loops, XLA's host-run loops and programs called once "
                         "each, multi-rank NVTX with lagging ranks, frameworks' own NVTX, queued work")
    ap.add_argument("--forms5", action="store_true",
                    help="draw h37-randjobs5's forms (random_form5_job): AMD's rocprof and rocpd traces, NVTX-only "
                         "Nsight exports, Kineto steps blocking on copies, tiny host-bound steps, one GPU slower, a "
                         "memory snapshot beside a trace")
    ap.add_argument("--forms7", action="store_true",
                    help="draw h37-randjobs7's forms (random_form7_job): rocprofv3 kernel traces with no host, "
                         "layer-wise hook markers, torch.compile's ranges, a diffusion pipeline of models")
    ap.add_argument("--forms8", action="store_true",
                    help="draw h37-randjobs8's form (random_form8_job): an MoE model's fp8 grouped GEMMs beside "
                         "DeepEP's all-to-all on a stream of its own")
    ap.add_argument("--forms9", action="store_true",
                    help="draw h37-a2afix's form (random_form9_job): an NCCL all-to-all beside embedding lookups, "
                         "an MoE router and grouped GEMM, or attention -- its fix fits what it exchanges")
    ap.add_argument("--forms10", action="store_true",
                    help="draw h37-randjobs9's forms (random_form10_job): attention op by op or fused in training and "
                         "inference, a pipeline preparing its input in traced Python, a JAX program's batch-fetch "
                         "range, a PyProf forward from the process's start")
    ap.add_argument("--forms11", action="store_true",
                    help="draw h37-randjobs11's forms (random_form11_job): libraries' NVTX vocabularies in their own "
                         "domains, native CUDA loops syncing outside any framework op (events timing each kernel, an "
                         "offload loop's stream syncs), one unmarked Kineto pass, a kernel trace with no host")
    a = ap.parse_args(argv)
    end = time.monotonic() + a.seconds
    seed, ran = a.seed, 0
    laws: collections.Counter[str] = collections.Counter()
    broken = 0
    while time.monotonic() < end and (not a.jobs or ran < a.jobs):
        job = random_form11_job(seed) if a.forms11 else random_form10_job(seed) if a.forms10 else random_form9_job(seed) if a.forms9 else random_form8_job(seed) if a.forms8 else random_form7_job(seed) if a.forms7 else random_form5_job(seed) if a.forms5 else random_form_job(seed) if a.forms else random_xplane_job(seed) if a.xplane else random_job(seed)
        found = check(job)
        ran += 1
        if found:
            broken += 1
            print(f"seed {seed}: {job}")
            for v in found:
                print(f"    {v}")
                laws[v.split(":", 1)[0]] += 1
        seed += 1
    print(f"{ran} jobs (seeds {a.seed}..{seed - 1}), {broken} broke a law"
          + (": " + ", ".join(f"{k} {n}" for k, n in laws.most_common()) if laws else ""))
    return 1 if broken else 0


if __name__ == "__main__":
    raise SystemExit(main())
