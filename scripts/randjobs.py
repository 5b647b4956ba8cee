"""Random jobs through the whole analysis for a time budget (h37-randjobs): every report law walked on each.

Each seed is one job of ``synthetic.randjobs`` (Kineto ranks, Nsight exports, windows with no GPU work; with
``--xplane``, JAX and TF XPlane captures and PyTorch memory snapshots; with ``--forms``, the forms of the newer real
captures: lost GPU records, OS-runtime-traced host loops, XLA's host-run loops, programs called once each; with ``--forms5``,
AMD's tracers, NVTX-only exports, blocking copies, tiny host-bound steps, a slower GPU, a snapshot beside a trace; with
``--forms9``, an NCCL all-to-all of each kind of exchange; with ``--forms10``, attention op by op or fused, a pipeline's
own input preparation, a JAX batch-fetch range, a PyProf forward; with ``--forms11``, libraries' NVTX vocabularies, native loops syncing outside any op, one
unmarked pass, a kernel trace with no host; with ``--forms12``, grain's loop in a JAX capture, one NVTX range framing a
benchmark's measured passes, DeepSpeed's ranges under gradient accumulation, evaluation ranges; with ``--forms13``, a
GPU host's window before its first kernel, users' blocking copies, a tiny RL loop, expandable-segment and two-device
snapshots; with ``--forms14``, a GPU host's loop that only fetches batches (or runs its model on the CPU); with ``--forms15``, a window at
either end of a queue (the loop's end draining it, a window opening on it); with ``--forms16``, session 44's forms (ranks pausing alone or opening their capture late, a loop polling its GPU, training snapshots that leak); with ``--forms17``, session 45's (a rank closing its capture early, evaluation between steps, ranges marked on another thread, launches between polls, waits inside the backward); with ``--forms18``, session 45's writers no stream drew (HIP and Nsight polls, sleeping polls, a CPU index, stackless snapshots, rankless Kineto files, counters with gaps); with ``--zero12``, DeepSpeed's ranges under ZeRO-1/2 or ZeRO-3 and gradient accumulation), analysed
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
                              random_form10_job, random_form11_job, random_form12_job, random_form13_job, random_form14_job,
                              random_form15_job, random_form16_job, random_form17_job, random_form18_job,
                              random_form_job, random_job, random_xplane_job, random_zero12_job)
from tests.support.random_jobs import check  # noqa: E402


#: Each stream a walk can draw, newest first (the first flag given wins): its flag, its drawer, what it draws.
STREAMS = (
    ("forms18", random_form18_job,
     "h37-forms18's forms: session 45's writers no stream drew -- HIP and Nsight loops polling after each burst or "
     "kernel, a Kineto loop polling at a sleep's pace, a layer indexing by a CPU tensor, a training snapshot recorded "
     "without stacks, ranks whose Kineto file states no rank, a step counter with gaps where evaluation ran"),
    ("forms17", random_form17_job,
     "h37-forms17's forms: a rank whose capture closed steps early (Nsight, Kineto), a training loop evaluating every "
     "few steps outside its step ranges, NVTX ranges on another thread or rank than the launches, a loop launching "
     "between its event queries, a backward node waiting for the GPU"),
    ("forms16", random_form16_job,
     "h37-forms16's forms: 2-4 ranks pausing alone or opening their capture late (one Kineto file each, or one Nsight "
     "export), a loop polling an event until its GPU drains, and a training loop's memory snapshot that leaks (a list, "
     "an evaluation's graph, a growing list) or not, under gradient accumulation and either optimizer"),
    ("forms15", random_form15_job,
     "h37-loopstart's forms: a Kineto window at the loop's end whose GPU drains the last step's queue (0-2,000 "
     "kernels; or the step launching its own work, the control), and a window mid-loop opening on the step before's "
     "queue, its steps opened by torch.cuda.synchronize() or not"),
    ("forms14", random_form14_job,
     "h37-inputgen's form: a Kineto window on a GPU host whose loop only fetches batches (0-12 DataLoader fetches, "
     "each copied to the GPU pinned or pageable, synced or not, or kept on the CPU), no kernel -- or the same loop "
     "running its model's aten::linear on the CPU"),
    ("zero12", random_zero12_job,
     "h37-zero12's form: DeepSpeed's NVTX ranges under ZeRO-1/2 (its update launched outside its ranges after every "
     "k-th micro-batch) or ZeRO-3, gradient accumulation 1, 2, 4 or 2-8, 1-4 ranks, in either domain"),
    ("forms13", random_form13_job,
     "h37-randjobs13's forms: a Kineto window on a GPU host that ended before its first kernel, the blocking copies "
     "users write in a step (.tolist(), torch.tensor(pylist, device=\"cuda\"), a pageable non_blocking upload), a tiny "
     "RL loop, memory snapshots of expandable segments or of two devices"),
    ("forms12", random_form12_job,
     "h37-randjobs12's forms: a JAX loop fed by grain (its prefetch thread recorded or not), one NVTX range framing a "
     "benchmark's measured passes after 0-3 warm-ups, DeepSpeed's NVTX ranges in either domain under gradient "
     "accumulation, a program's evaluation ranges alone or beside a fit"),
    ("forms11", random_form11_job,
     "h37-randjobs11's forms: libraries' NVTX vocabularies in their own domains, native CUDA loops syncing outside any "
     "framework op (events timing each kernel, an offload loop's stream syncs), one unmarked Kineto pass, a kernel "
     "trace with no host"),
    ("forms10", random_form10_job,
     "h37-randjobs9's forms: attention op by op or fused in training and inference, a pipeline preparing its input in "
     "traced Python, a JAX program's batch-fetch range, a PyProf forward from the process's start"),
    ("forms9", random_form9_job,
     "h37-a2afix's form: an NCCL all-to-all beside embedding lookups, an MoE router and grouped GEMM, or attention -- "
     "its fix fits what it exchanges"),
    ("forms8", random_form8_job,
     "h37-randjobs8's form: an MoE model's fp8 grouped GEMMs beside DeepEP's all-to-all on a stream of its own"),
    ("forms7", random_form7_job,
     "h37-randjobs7's forms: rocprofv3 kernel traces with no host, layer-wise hook markers, torch.compile's ranges, a "
     "diffusion pipeline of models"),
    ("forms5", random_form5_job,
     "h37-randjobs5's forms: AMD's rocprof and rocpd traces, NVTX-only Nsight exports, Kineto steps blocking on "
     "copies, tiny host-bound steps, one GPU slower, a memory snapshot beside a trace"),
    ("forms", random_form_job,
     "the forms newer real captures show: GPU records lost mid-window or at the tail, OS-runtime-traced host loops, "
     "XLA's host-run loops and programs called once each, multi-rank NVTX with lagging ranks, frameworks' own NVTX, "
     "queued work"),
    ("xplane", random_xplane_job, "JAX/TF XPlane jobs and memory snapshots instead of Kineto/Nsight"),
)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="time budget (default 60)")
    ap.add_argument("--seed", type=int, default=0, help="the first job's seed; the next jobs take the next seeds")
    ap.add_argument("--jobs", type=int, default=0, help="stop after this many jobs (0: the time budget only)")
    for flag, drawer, what in STREAMS:
        ap.add_argument(f"--{flag}", action="store_true", help=f"draw {what} ({drawer.__name__})")
    a = ap.parse_args(argv)
    draw = next((drawer for flag, drawer, _ in STREAMS if getattr(a, flag)), random_job)
    end = time.monotonic() + a.seconds
    seed, ran = a.seed, 0
    laws: collections.Counter[str] = collections.Counter()
    broken = 0
    while time.monotonic() < end and (not a.jobs or ran < a.jobs):
        job = draw(seed)
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
