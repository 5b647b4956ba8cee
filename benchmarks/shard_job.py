"""A large synthetic job through ``precompute --shard K/N``, then the job view: wall time and peak memory per process.

    python benchmarks/shard_job.py [--nodes 128] [--per-node 8] [--steps 12] [--shards 4] [--dir DIR]

Writes a DDP job of nodes x per-node ranks (one PyTorch trace per rank, node 7 made 1.3x slower) with the
synthetic generator, then runs, each in fresh processes measured by GNU time (peak RSS of each process):

1. the floor: reading every byte of every file once (one Python process);
2. the N shards at once, as a Slurm job array would run them, into one cache folder;
3. the job view: ``report --format json`` merging the per-host entries, no analysis;
4. for comparison, the same report with the cache off (one process analyses every host).

Prints a markdown table: stage, processes, wall s, peak RSS per process (max), and the job view's top finding,
which must be the slow node.  Numbers are of the machine it runs on; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from synthetic import torchtrace as tt  # noqa: E402


def _run(cmds: list[list[str]], env: dict | None = None) -> tuple[float, list[int], list[str]]:
    """Start every command at once; (wall s, peak RSS kB of each, stdout of each).

    Peak RSS is GNU time's ``%M`` of each command: ``ru_maxrss`` of a child forked from this (large) process would
    count the parent's pages it held until ``exec``."""
    t0 = time.perf_counter()
    tmp = tempfile.mkdtemp(prefix="rss_")
    outs_f = [os.path.join(tmp, f"{i}.rss") for i in range(len(cmds))]
    procs = [subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", f, *c], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, env=env, cwd=REPO) for c, f in zip(cmds, outs_f)]
    outs = [p.communicate()[0].decode() for p in procs]
    wall = time.perf_counter() - t0
    peaks = []
    for f in outs_f:
        with open(f) as fh:
            peaks.append(int(fh.read().strip().splitlines()[-1]))
    shutil.rmtree(tmp, ignore_errors=True)
    return wall, peaks, outs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=128)
    ap.add_argument("--per-node", type=int, default=8)
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--dir", default=None, help="work folder (default: a temporary one, removed afterwards)")
    ap.add_argument("--skip-unsharded", action="store_true", help="skip stage 4 (one process analysing everything)")
    a = ap.parse_args(argv)
    work = a.dir or tempfile.mkdtemp(prefix="shard_job_")
    logdir, cache = os.path.join(work, "logdir"), os.path.join(work, "cache")
    shutil.rmtree(cache, ignore_errors=True)
    ranks = a.nodes * a.per_node
    t0 = time.perf_counter()
    if not os.path.isdir(os.path.join(logdir, "job")):
        tt.write_run(logdir, tt.ddp_job(a.nodes, a.per_node, slow_node=min(7, a.nodes - 1)), steps=a.steps, run="job")
    gen_s = time.perf_counter() - t0
    files = [os.path.join(logdir, "job", f) for f in os.listdir(os.path.join(logdir, "job"))]
    size = sum(os.path.getsize(f) for f in files)
    py = [sys.executable]
    cli = py + ["-m", "tb_gpu_advisor.cli"]
    env = dict(os.environ, PYTHONPATH=REPO)
    rows = []
    floor = py + ["-c", "import sys\nfor p in sys.argv[1:]:\n    open(p, 'rb').read()", *files]
    w, peaks, _ = _run([floor], env)
    rows.append(("floor: read every file once", 1, w, max(peaks)))
    w, peaks, _ = _run([cli + ["precompute", logdir, "--shard", f"{k}/{a.shards}", "--cache-dir", cache, "--jobs", "1"]
                        for k in range(a.shards)], env)
    rows.append((f"precompute --shard k/{a.shards}, all at once", a.shards, w, max(peaks)))
    w, peaks, outs = _run([cli + ["report", logdir, "--run", "job", "--format", "json", "--cache-dir", cache]], env)
    rows.append(("job view: report from the per-host cache", 1, w, max(peaks)))
    rep = json.loads(outs[0])
    top = rep["findings"][0] if rep["findings"] else {}
    if not a.skip_unsharded:
        w, peaks, _ = _run([cli + ["report", logdir, "--run", "job", "--format", "json"]],
                           dict(env, TB_GPU_ADVISOR_CACHE_DIR="off"))
        rows.append(("report without cache (one process, every host)", 1, w, max(peaks)))
    print(f"## Sharded precompute: {ranks} ranks ({a.nodes} nodes x {a.per_node}), {len(files)} files, "
          f"{size / 1e6:.0f} MB, {a.steps} steps (generated in {gen_s:.0f} s)\n")
    print("| stage | processes | wall s | peak RSS per process (max) |")
    print("|---|---|---|---|")
    for name, n, wall, kb in rows:
        print(f"| {name} | {n} | {wall:.1f} | {kb / 1024:.0f} MB |")
    print(f"\njob view: {len(rep.get('ranks', {}).get('rows', []))} ranks; top finding: {top.get('rule')} on "
          f"{top.get('host')} ({(top.get('saving') or {}).get('ms_per_step')} ms/step); cpu cores: {os.cpu_count()}")
    if not a.dir:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
