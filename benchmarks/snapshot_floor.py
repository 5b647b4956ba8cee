"""Memory-snapshot pickles: ``read_trace`` and ``report`` CPU and peak RSS, compiled reader vs pure Python vs the
stdlib's ``pickle.loads`` (the floor: the C unpickler, which runs code and bounds nothing), one fresh process each
(issue #38, the snapshot reader's C twin).

    python benchmarks/snapshot_floor.py --entries 250000,2300000 --methods floor,read,read-pure,report,report-pure

Files are ``synthetic.memsnapshot.write_large`` histories (54 MB at 250,000 entries), written once under ``--cache``.
``report`` methods run one warm-up report of a small generated snapshot first (imports and first-call costs), as
``benchmarks/kineto_floor.py`` does; CPU is the measured call's, RSS the process's high-water mark.  The reports of
both paths are compared (their JSON, version fields dropped).  Prints a markdown table with the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path[:0] = [REPO, os.path.join(REPO, "scripts")]

import rows as rowlib  # noqa: E402


def _cpu() -> float:
    import resource

    me = resource.getrusage(resource.RUSAGE_SELF)
    return me.ru_utime + me.ru_stime


def _hwm_kb() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))


def _report(path: str, out: str) -> int:
    from tb_gpu_advisor.cli.main import main

    return main(["report", path, "--format", "json", "--output", out])


def child(method: str, path: str, out: str, warm: str) -> None:
    import numpy  # noqa: F401 - every method has numpy loaded before its baseline

    if method.startswith("report"):
        _report(warm, os.devnull)
    elif method.startswith("read"):
        from tb_gpu_advisor.formats.snapshot.reader import read_trace
    import pickle

    t, c = time.perf_counter(), _cpu()
    if method == "floor":
        with open(path, "rb") as f:
            pickle.loads(f.read())
    elif method.startswith("read"):
        read_trace(path)
    else:
        _report(path, out)
    print(json.dumps({"wall_s": time.perf_counter() - t, "cpu_s": _cpu() - c, "peak_kb": _hwm_kb()}))


def make(entries: int, cache: str) -> str:
    from synthetic.memsnapshot import write_large

    path = os.path.join(cache, f"snapshot_{entries}.pickle")
    if not os.path.exists(path):
        write_large(path + ".tmp", entries)
        os.replace(path + ".tmp", path)
    return path


def warm_file(cache: str) -> str:
    from synthetic import memsnapshot

    path = os.path.join(cache, "warm.pickle")
    if not os.path.exists(path):
        memsnapshot.write(path, memsnapshot.SCENARIOS["oom_activations"]().doc)
    return path


def run_child(method: str, path: str, out: str, warm: str) -> dict:
    env = {**os.environ, "TB_GPU_ADVISOR_CACHE_DIR": "off", "PYTHONPATH": REPO}
    if method.endswith("-pure"):
        env["TB_GPU_ADVISOR_PURE_PYTHON"] = "1"
    else:
        env.pop("TB_GPU_ADVISOR_PURE_PYTHON", None)
    p = subprocess.run([sys.executable, __file__, "--child", method, path, out, warm], capture_output=True, text=True,
                       check=False, env=env, cwd=REPO)
    if p.returncode != 0:
        return {"error": (p.stderr.strip().splitlines() or ["?"])[-1][:100]}
    return json.loads(p.stdout.strip().splitlines()[-1])


NAMES = {"floor": "floor (pickle.loads)", "read": "read_trace, compiled", "read-pure": "read_trace, pure Python",
         "report": "report, compiled", "report-pure": "report, pure Python"}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--entries", default="250000")
    ap.add_argument("--methods", default="floor,read,read-pure,report,report-pure")
    ap.add_argument("--cache", default="/tmp/snapshot_floor")
    a = ap.parse_args(argv)
    os.makedirs(a.cache, exist_ok=True)
    warm = warm_file(a.cache)
    print(f"load average at the start: {rowlib.load_average()}")
    print("| entries | file MB | method | CPU s | wall s | CPU / floor | peak RSS MB | peak / file | report |")
    print("|---:|---:|---|---:|---:|---:|---:|---:|---|")
    for entries in (int(x) for x in a.entries.split(",")):
        path = make(entries, a.cache)
        mb = os.path.getsize(path) / 1e6
        floor, digests = None, {}
        for method in a.methods.split(","):
            out = os.path.join(a.cache, f"report_{entries}_{method}.json")
            r = run_child(method, path, out, warm)
            if "error" in r:
                print(f"| {entries:,} | {mb:.0f} | {NAMES[method]} | error: {r['error']} |")
                continue
            floor = r["cpu_s"] if method == "floor" else floor
            same = ""
            if method.startswith("report"):
                digests[method] = rowlib.report_digest(out)
                same = "reference" if method == "report" else (
                    "identical" if digests.get("report") == digests[method] else "DIFFERENT")
            ratio = f"{r['cpu_s'] / floor:.1f}x" if floor else ""
            print(f"| {entries:,} | {mb:.0f} | {NAMES[method]} | {r['cpu_s']:.2f} | {r['wall_s']:.2f} | {ratio} | "
                  f"{r['peak_kb'] / 1024:.0f} | {r['peak_kb'] / 1024 / mb:.2f}x | {same} |", flush=True)
    print(f"load average at the end: {rowlib.load_average()}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(*sys.argv[2:6])
    else:
        sys.exit(main())
