"""The PyTorch reader against its decode floor (issue #30): ``report`` of a big trace vs a typed decode of the same file.

    python benchmarks/kineto_floor.py [--sizes 100,1000] [--shapes h100,tiny] [--cache-dir /tmp/kineto-floor]
                                      [--before CHECKOUT] [--repeat 1]

Why: a PyTorch trace cost ten times more per event than an XPlane one.  The floor is what no JSON reader in Python
beats by much: msgspec's typed decode of every event's common fields (ph, cat, name, pid, tid, ts, dur) with
``args`` left raw, of the whole file at once.  The reader must come within 2x of it, read *and* report.

How: a real trace is repeated, shifted in time and ids (``kineto_parse.make_trace``), to each size; two shapes
(two event densities): ``h100`` (``torch_healthy_bf16``, a bf16 training step of big kernels) and ``tiny``
(``torch_tiny_ops``, many small ops).  Every measurement runs in a fresh child process, one after the other:

- ``floor``: the typed decode with raw ``args`` (default structs, as one would write it), the objects then freed;
- ``floor-untracked``: the same with ``gc=False`` structs (the garbage collector does not track them: the reader's
  own decode does this);
- ``ours-serial``: ``tb-gpu-advisor report FILE --format json`` in the child, chunks decoded in that process only;
- ``ours``: the same with the default workers (chunks past 32 MB decoded by worker processes, one per CPU);
- ``pure-serial`` / ``pure``: ``ours-serial`` / ``ours`` with ``TB_GPU_ADVISOR_PURE_PYTHON=1`` (the typed decode in
  Python instead of the compiled scanner, issue #38);
- ``before`` (with ``--before``): ``ours`` run from another checkout (the code before the change).

The report runs after a warm-up report of the small source trace, so interpreter start-up and imports are not
counted.  CPU s is user + system of the child *and its worker processes* over the measured work (on a loaded
machine it says more than wall time); peak RSS is the child's high-water mark (``VmHWM``), and the largest worker's
where there were workers (forked: it counts pages shared with the parent).  The ``report`` outputs of ``ours``,
``ours-serial`` and ``before`` are compared (versions and clock aside) and the table says whether they are identical.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path[:0] = [os.path.join(REPO, "scripts"), HERE]
import rows as rowlib

PROFILES = os.path.join(REPO, "..", "shared", "profiles", "real-h100-torch")
SHAPES = {"h100": "torch_healthy_bf16", "tiny": "torch_tiny_ops"}


# -- child side -----------------------------------------------------------------------------------------------

def _status_kb(key: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def _cpu() -> float:
    import resource

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _floor(path: str, untracked: bool) -> dict:
    import msgspec

    opts = {"gc": False} if untracked else {}
    event = msgspec.defstruct("Event", [("ph", str, ""), ("cat", str, ""), ("name", str, ""), ("pid", int | str, 0),
                                        ("tid", int | str, 0), ("ts", float, 0.0), ("dur", float, 0.0),
                                        ("args", msgspec.Raw, msgspec.Raw(b""))], **opts)
    trace = msgspec.defstruct("Trace", [("traceEvents", list[event], [])], **opts)
    with open(path, "rb") as f:
        data = f.read()
    n = len(msgspec.json.decode(data, type=trace).traceEvents)
    return {"events": n}


def _report(path: str, out: str) -> dict:
    from tb_gpu_advisor.cli.main import main

    rc = main(["report", os.path.dirname(os.path.dirname(path)), "--format", "json", "--output", out])
    return {"rc": rc}


def child(method: str, path: str, out: str, warm: str) -> None:
    import numpy  # noqa: F401 - every method has numpy loaded before its baseline

    if method.startswith("floor"):
        import msgspec  # noqa: F401
    else:
        _report(warm, os.devnull)  # imports and first-call costs, on the small source trace
    import resource

    t, c = time.perf_counter(), _cpu()
    r = _floor(path, method == "floor-untracked") if method.startswith("floor") else _report(path, out)
    r.update(wall_s=time.perf_counter() - t, cpu_s=_cpu() - c, peak_kb=_status_kb("VmHWM"),
             worker_peak_kb=resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    print(json.dumps(r))


# -- parent side ----------------------------------------------------------------------------------------------

def make(shape: str, mb: int, cache: str) -> str:
    """``cache/<shape>_<mb>MB/run/host.pt.trace.json`` (a logdir of one run), written once."""
    sys.path.insert(0, HERE)
    from kineto_parse import make_trace, source_trace

    path = os.path.join(cache, f"{shape}_{mb}MB", "run", "host.pt.trace.json")
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        make_trace(source_trace(os.path.join(PROFILES, SHAPES[shape])), mb, path + ".tmp")
        os.replace(path + ".tmp", path)
    return path


def warm_logdir(shape: str, cache: str) -> str:
    sys.path.insert(0, HERE)
    from kineto_parse import source_trace

    path = os.path.join(cache, f"{shape}_warm", "run", "host.pt.trace.json")
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        shutil.copyfile(source_trace(os.path.join(PROFILES, SHAPES[shape])), path)
    return path


def run_child(method: str, path: str, out: str, warm: str, before: str | None) -> dict:
    env = {**os.environ, "TB_GPU_ADVISOR_CACHE_DIR": "off"}
    env["PYTHONPATH"] = before if method == "before" else REPO
    if method in ("ours-serial", "pure-serial"):
        env["TB_GPU_ADVISOR_PARSE_WORKERS"] = "1"
    else:
        env.pop("TB_GPU_ADVISOR_PARSE_WORKERS", None)
    if method.startswith("pure"):
        env["TB_GPU_ADVISOR_PURE_PYTHON"] = "1"
    else:
        env.pop("TB_GPU_ADVISOR_PURE_PYTHON", None)
    p = subprocess.run([sys.executable, __file__, "--child", method, path, out, warm], capture_output=True, text=True, check=False,
                       env=env, cwd=REPO if method != "before" else before)
    if p.returncode != 0:
        return {"error": (p.stderr.strip().splitlines() or ["?"])[-1][:80]}
    return json.loads(p.stdout.strip().splitlines()[-1])


#: rows.py's part of each method (the others -- serial, untracked, before -- stay in this script's own table).
ROW_PARTS = {"floor": "floor", "ours": "ours", "pure": "pure"}


def as_row(shape: str, mb: int, size: int, runs: dict[str, dict]) -> dict:
    """One ``rows.py`` row of a trace: its floor, ours and pure measurements (``runs``: method -> the child's
    result, or ``{"error": ...}``)."""
    parts = {}
    for method, part in ROW_PARTS.items():
        r = runs.get(method)
        if r is None:
            continue
        extra = {"what": "msgspec raw-args decode"} if part == "floor" else {}
        parts[part] = (rowlib.measured(f"error: {r['error']}", **extra) if "error" in r else
                       rowlib.measured("ok", r["cpu_s"], r["wall_s"], r["peak_kb"] * 1024, **extra))
    return rowlib.row("pytorch", shape, rowlib.size_label(mb * 10**6), size, "after a warm-up report", **parts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100,1000", help="trace sizes in MB (default %(default)s)")
    ap.add_argument("--shapes", default="h100,tiny", help=f"of {', '.join(SHAPES)} (default %(default)s)")
    ap.add_argument("--cache-dir", default=os.path.join(tempfile.gettempdir(), "kineto-floor"))
    ap.add_argument("--before", help="a checkout of the code before the change: its report is measured too")
    ap.add_argument("--methods", default="floor,floor-untracked,before,ours-serial,ours,pure-serial,pure")
    ap.add_argument("--repeat", type=int, default=1, help="runs per measurement; the table shows the least CPU")
    ap.add_argument("--json", help="also write the rows (benchmarks/rows.py) to this file")
    ap.add_argument("--generate-only", action="store_true", help="write the traces into --cache-dir, measure nothing")
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(*args.child)
        return 0
    if args.generate_only:
        for shape in args.shapes.split(","):
            warm_logdir(shape, args.cache_dir)
            for mb in (int(x) for x in args.sizes.split(",")):
                print(make(shape, mb, args.cache_dir))
        return 0
    if not all(os.path.exists(os.path.join(args.cache_dir, f"{shape}_{mb}MB", "run", "host.pt.trace.json"))
               for shape in args.shapes.split(",") for mb in args.sizes.split(",")):
        # written by a child: a measured child's peak RSS counts the pages of the process it was started from
        subprocess.run([sys.executable, __file__, "--generate-only", "--sizes", args.sizes, "--shapes", args.shapes,
                        "--cache-dir", args.cache_dir], check=True, stdout=subprocess.DEVNULL)
    methods = [m for m in args.methods.split(",") if m and (m != "before" or args.before)]
    print(f"machine: {platform.node()}, {os.cpu_count()} CPUs, {platform.processor() or platform.machine()}, "
          f"Python {platform.python_version()}; load average at start {rowlib.load_average()}\n")
    print("CPU s: user + system of the measured work, worker processes included. report: its JSON against the first "
          "method's (versions and clock aside).\n")
    print("| shape | file MB | events | method | CPU s | wall s | CPU / floor CPU | wall / floor wall | "
          "peak RSS MB | peak / file | largest worker MB | report |")
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---|")
    outdir = tempfile.mkdtemp(prefix="kineto-floor-out-")
    table_rows = []
    for shape in args.shapes.split(","):
        warm = warm_logdir(shape, args.cache_dir)
        for mb in (int(x) for x in args.sizes.split(",")):
            path = make(shape, mb, args.cache_dir)
            size = os.path.getsize(path)
            floor: dict | None = None
            ref: str | None = None
            chosen: dict[str, dict] = {}
            for m in methods:
                runs = []
                for _ in range(args.repeat):
                    out = os.path.join(outdir, f"{shape}_{mb}_{m}.json")
                    runs.append(run_child(m, path, out, warm, args.before))
                ok = [r for r in runs if "error" not in r]
                chosen[m] = min(ok, key=lambda x: x["cpu_s"]) if ok else runs[0]
                if not ok:
                    print(f"| {shape} | {size / 1e6:.0f} | | {m} | failed: {runs[0]['error']} |||||||", flush=True)
                    continue
                r = min(ok, key=lambda x: x["cpu_s"])
                if m == "floor":
                    floor = r
                events = (floor or r).get("events", "")
                rep = ""
                if not m.startswith("floor"):  # every report against the first one (``before`` where measured)
                    digest = rowlib.report_digest(out)
                    rep = "reference" if ref is None else "identical" if digest == ref else f"differs ({digest})"
                    ref = ref or digest
                ratio = f"{r['cpu_s'] / floor['cpu_s']:.2f}x" if floor else ""
                wratio = f"{r['wall_s'] / floor['wall_s']:.2f}x" if floor else ""
                worker = f"{r['worker_peak_kb'] / 1024:.0f}" if r.get("worker_peak_kb") else ""
                print(f"| {shape} | {size / 1e6:.0f} | {events if isinstance(events, str) else f'{events:,}'} | {m} | "
                      f"{r['cpu_s']:.2f} | {r['wall_s']:.2f} | {ratio} | {wratio} | {r['peak_kb'] / 1024:.0f} | "
                      f"{r['peak_kb'] * 1024 / size:.2f}x | {worker} | {rep} |", flush=True)
            table_rows.append(as_row(shape, mb, size, chosen))
    print(f"\nload average at end {rowlib.load_average()}")
    rowlib.write(args.json, table_rows)
    shutil.rmtree(outdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
