"""Time and peak memory of ``tb-gpu-advisor report`` on a large Nsight Systems export (issue 28, item 5).

    python benchmarks/nsys_large.py                   # a 1 GB export: generated once into .bench/nsys/
    python benchmarks/nsys_large.py --size 200MB --repeat 2
    python benchmarks/nsys_large.py --size 1GB --only read --code ../main   # another checkout's code, same export

The export is written by ``synthetic.nsysexport`` with the real exports' schema (one rank, 50 ATen ops and kernels
per step under autograd NVTX ranges, a pinned host-to-device copy, a ``cudaStreamSynchronize`` per step and a
``train_step N`` range around it), its rows shuffled as newer exports write them, until the file reaches ``--size``.
Each measurement is a fresh process reaped with ``os.wait4`` (its peak RSS is the kernel's high-water mark):

* **read**: ``formats.nsys.reader.read_trace`` alone (the SQLite tables a chunk at a time into numpy columns);
* **report**: what a user runs, ``tb-gpu-advisor report FILE --format json`` with the report cache off.

Results are printed as a markdown table and saved as ``<cache-dir>/nsys-<time>.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path[:0] = [HERE, REPO]

from run import _child_env, parse_size, run_process  # noqa: E402  (benchmarks/ is on the path now)

from synthetic.nsysexport import NsysJob, write  # noqa: E402

#: Steps of the calibration export (bytes per step are measured on it).
_CALIBRATION_STEPS = 400
READ = ("import sys, time, json; from tb_gpu_advisor.formats.nsys.reader import read_trace; t = time.perf_counter(); "
        "tr = read_trace(sys.argv[1]); print(json.dumps({'work_s': time.perf_counter() - t, 'host_events': len(tr.h), "
        "'device_events': sum(len(d) for d in tr.devices)}))")


def export_of(size: int, folder: str) -> tuple[str, dict]:
    """The export of about ``size`` bytes in ``folder`` (written now unless there), and its truth."""
    path = os.path.join(folder, "run", "report.sqlite")
    meta = path + ".json"
    if os.path.isfile(path) and os.path.isfile(meta):
        return path, json.load(open(meta))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    probe = os.path.join(folder, "calibration.sqlite")
    if os.path.exists(probe):
        os.remove(probe)
    write(probe, NsysJob(steps=_CALIBRATION_STEPS))
    per_step = os.path.getsize(probe) / _CALIBRATION_STEPS
    os.remove(probe)
    steps = max(10, int(size / per_step))
    t0 = time.perf_counter()
    truth = write(path + ".tmp", NsysJob(steps=steps))
    os.replace(path + ".tmp", path)
    info = {"steps": steps, "rows": truth.rows, "kernels": truth.kernels[0], "write_s": round(time.perf_counter() - t0, 1),
            "bytes": os.path.getsize(path)}
    json.dump(info, open(meta, "w"))
    return path, info


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", default="1GB", help="export size (default 1GB)")
    p.add_argument("--cache-dir", default=os.path.join(REPO, ".bench"), help="where the export and results go")
    p.add_argument("--repeat", type=int, default=1, help="fresh processes per measurement (the median is kept)")
    p.add_argument("--timeout", type=float, default=3600.0, help="seconds a measurement may take")
    p.add_argument("--mem-cap", default="16GB", help="kill a measurement above this RSS (no swap here)")
    p.add_argument("--only", choices=("read", "report"), help="one measurement only")
    p.add_argument("--code", default=REPO, help="the checkout whose code runs (default this one; another: a before/after "
                                                "pair on the same export)")
    a = p.parse_args(argv)
    size = parse_size(a.size)
    folder = os.path.join(a.cache_dir, "nsys", a.size)
    path, info = export_of(size, folder)
    env = _child_env({"TB_GPU_ADVISOR_CACHE_DIR": "off"})
    env["PYTHONPATH"] = os.path.abspath(a.code) + os.pathsep + env["PYTHONPATH"]
    cap = parse_size(a.mem_cap)
    rows = []
    # -P: the children run in this checkout's folder; the code measured is the one PYTHONPATH names, not the cwd's
    measures = (("read", "read (read_trace)", [sys.executable, "-P", "-c", READ, path]),
                ("report", "report (tb-gpu-advisor report FILE --format json)",
                 [sys.executable, "-P", "-m", "tb_gpu_advisor.cli", "report", path, "--format", "json", "-o",
                  os.devnull]))
    for _, label, argv_ in (m for m in measures if a.only in (None, m[0])):
        runs = [run_process(label, argv_, a.timeout, cap, env) for _ in range(a.repeat)]
        ok = [(m, out) for m, code, out, _ in runs if m.status == "ok" and code in (0, 1)]
        if not ok:
            m, code, _, err = runs[0]
            rows.append((label, m.status if m.status != "ok" else f"error (exit {code}: {err.strip()[-120:]})",
                         None, None, None, None))
            continue
        ok.sort(key=lambda x: x[0].wall_s or 0)
        m, out = ok[len(ok) // 2]
        work = None
        if out.strip().startswith("{"):
            work = json.loads(out.strip().splitlines()[-1]).get("work_s")
        rows.append((label, "ok", m.wall_s, work, m.cpu_s, max(x[0].maxrss or 0 for x in ok)))
    mb = info["bytes"] / 1e6
    code = os.path.abspath(a.code)
    lines = [f"Nsight export: {path} ({mb:,.0f} MB, {info['rows']:,} rows, {info['kernels']:,} kernels, "
             f"{info['steps']:,} steps; written in {info['write_s']} s)", "",
             f"code: {code}; load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", "",
             "| measurement | status | wall s | work s | CPU s | peak RSS MB | peak RSS / file | MB/s (wall) |",
             "|---|---|---|---|---|---|---|---|"]
    for label, status, wall, work, cpu, rss in rows:
        lines.append(f"| {label} | {status} | {wall:.1f} | {'' if work is None else f'{work:.1f}'} | "
                     f"{'' if cpu is None else f'{cpu:.1f}'} | {rss / 1e6:,.0f} | {rss / info['bytes']:.2f}x | "
                     f"{mb / wall:.1f} |" if wall else f"| {label} | {status} | | | | | | |")
    text = "\n".join(lines)
    print(text)
    os.makedirs(a.cache_dir, exist_ok=True)
    with open(os.path.join(a.cache_dir, f"nsys-{time.strftime('%Y%m%d-%H%M%S')}.md"), "w") as f:
        f.write(text + "\n")
    return 0 if all(r[1] == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
