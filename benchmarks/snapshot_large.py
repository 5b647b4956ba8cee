"""A memory snapshot over 1 GB (issue #37 class 5; pytorch#176290: PyTorch's own viewer fails on such files): the
peak RSS and time of reading it, one fresh process each, against the floor -- the stdlib's ``pickle.load`` (the C
unpickler: it runs code and bounds nothing, and builds every dict) -- and ``python -m torch.cuda._memory_viz stats``
where torch is installed.  Not a test: it writes a file of ``--entries`` trace entries (5,000,000: 1.08 GB) with
``synthetic.memsnapshot.write_large`` (streamed, in constant memory) to ``--path`` unless it is there, its gzip
(``--gzip``, ``gzip -1``) and its memory viewer page (``--page``, ``synthetic.hostile_inputs.write_page``: the pickle
base64 in PyTorch's ``.html``) unless they are there, and prints one markdown table: per file, our reader compiled
(``read``) and pure Python (``read_py``, ``TB_GPU_ADVISOR_PURE_PYTHON=1``), the whole report (``report``: ``python -m
tb_gpu_advisor.cli report --format json``, reading and analysing), and the floor, each's peak RSS and its ratio to the
pickle (the gzip's and the page's decompressed / decoded).  Delete the files after (``--remove``).

    python benchmarks/snapshot_large.py [--entries 5000000] [--path /tmp/snapshot_large.pickle]
        [--gzip /tmp/snapshot_large.pickle.gz | --gzip ''] [--page /tmp/snapshot_large.html | --page ''] [--remove]
        [--methods floor,read,read_py,report,memory_viz] [--files plain,gzip,page] [--repo PATH ...]

``--repo`` reads with another checkout's reader too (``read@PATH``): the same file before and after a change.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

_CHILD = r"""
import sys, time
sys.path.insert(0, {repo!r})
import numpy  # every method has numpy loaded before it starts, as the reader does
method, path = {method!r}, {path!r}
t = time.perf_counter()
if method == "floor":
    import gzip, pickle
    with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
        doc = pickle.load(f)
    n = sum(len(x) for x in doc.get("device_traces", []))
elif method in ("read", "read_py"):
    from tb_gpu_advisor.formats.snapshot.reader import read_trace
    from tb_gpu_advisor.formats.snapshot import compiled
    tr = read_trace(path)
    n = sum(len(m) for m in tr.memory.values())
    print("reader:", compiled.describe(), file=sys.stderr)
print(f"{{time.perf_counter() - t:.1f}} {{n}}")
"""


def run(method: str, path: str, repo: str) -> tuple[str, float | None, int | None, str]:
    """One fresh process: (what, wall s, peak RSS in MB, note)."""
    if method == "memory_viz":
        cmd = [sys.executable, "-m", "torch.cuda._memory_viz", "stats", path]
    elif method == "report":  # the checkout's own package: run from its root
        cmd = [sys.executable, "-c", f"import sys, runpy; sys.path.insert(0, {repo!r}); sys.argv = ['tb-gpu-advisor', "
               f"'report', {path!r}, '--format', 'json']; runpy.run_module('tb_gpu_advisor.cli', run_name='__main__')"]
    else:
        cmd = [sys.executable, "-c", _CHILD.format(repo=repo, method=method, path=path)]
    import tempfile

    env = {**os.environ, "TB_GPU_ADVISOR_CACHE_DIR": "off"}
    if method == "read_py":
        env["TB_GPU_ADVISOR_PURE_PYTHON"] = "1"

    with tempfile.TemporaryFile("w+") as fo, tempfile.TemporaryFile("w+") as fe:
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=fo if method != "report" else subprocess.DEVNULL, stderr=fe, text=True,
                                env=env)
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own high-water mark (ru_maxrss, kB)
        wall = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        fo.seek(0)
        fe.seek(0)
        out, err = fo.read(), fe.read()
    rss = usage.ru_maxrss // 1024
    ok = proc.returncode == 0 or method == "report" and proc.returncode == 1  # a report's 1: it found something
    note = "" if ok else f"exit {proc.returncode}: " + (err.strip().splitlines() or [""])[-1][:90]
    if ok and method in ("read", "read_py"):
        wall = float(out.split()[0])
        note = [line for line in err.splitlines() if line.startswith("reader:")][:1]
        note = note[0] if note else ""
    return method, wall, rss, note


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--entries", type=int, default=5_000_000)
    ap.add_argument("--path", default="/tmp/snapshot_large.pickle")
    ap.add_argument("--gzip", default="/tmp/snapshot_large.pickle.gz", help="its gzip ('': none)")
    ap.add_argument("--page", default="/tmp/snapshot_large.html", help="its viewer page ('': none)")
    ap.add_argument("--methods", default="floor,read,read_py,report,memory_viz")
    ap.add_argument("--files", default="plain,gzip,page", help="which of the files to read (plain, gzip, page)")
    ap.add_argument("--repo", action="append", default=[], help="another checkout whose reader reads the file too")
    ap.add_argument("--remove", action="store_true", help="delete the file after")
    a = ap.parse_args(argv)
    sys.path.insert(0, REPO)
    if not os.path.exists(a.path):
        from synthetic.memsnapshot import write_large

        t = time.perf_counter()
        write_large(a.path, a.entries)
        print(f"wrote {a.path}: {os.path.getsize(a.path):,} bytes in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    if a.gzip and not os.path.exists(a.gzip):
        with open(a.gzip, "wb") as out:
            subprocess.run(["gzip", "-1", "-c", a.path], stdout=out, check=True)
    if a.page and not os.path.exists(a.page):
        from synthetic.hostile_inputs import write_page

        write_page(a.path, a.page)
    size = os.path.getsize(a.path)
    methods = [m for m in a.methods.split(",") if m]
    if "memory_viz" in methods:
        try:
            import torch  # noqa: F401
        except ImportError:
            methods.remove("memory_viz")
            print("torch is not installed: no _memory_viz row (the floor is pickle.load's)", file=sys.stderr)
    print("| file | reader | file MB | wall s | peak RSS MB | peak RSS / pickle | note |\n"
          "|---|---|---:|---:|---:|---:|---|")
    files = a.files.split(",")
    for path in ([a.path] if "plain" in files else []) + ([a.gzip] if a.gzip and "gzip" in files else []) + \
            ([a.page] if a.page and "page" in files else []):
        jobs = [(m, REPO) for m in methods if m not in ("memory_viz", "floor") or path == a.path or
                m == "floor" and path == a.gzip] + [(m, r) for r in a.repo for m in ("read", "report") if m in methods]
        for method, repo in jobs:
            name, wall, rss, note = run(method, path, repo)
            label = name if repo == REPO else f"{name}@{repo}"
            ratio = f"{rss * 2**20 / size:.2f}x" if rss else "n/a"  # of the pickle (the gzip's decompressed)
            print(f"| {os.path.basename(path)} | {label} | {os.path.getsize(path) / 1e6:,.0f} | {wall:.1f} | {rss:,} | "
                  f"{ratio} | {note} |", flush=True)
    if a.remove:
        os.remove(a.path)
        for other in (a.gzip, a.page):
            if other:
                os.remove(other)
    print(f"load average {os.getloadavg()[0]:.1f}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
