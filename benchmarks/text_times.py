"""Kineto traces whose times are written as text: ``formats.kineto.parse.times_as_numbers`` against its floor.

    python benchmarks/text_times.py [--mb 8,32] [--gz] [--cache /tmp/text-times]

A writer that quotes ``ts``/``dur`` (``"1700000000123.5"``) leaves every event unread until they are rewritten as
numbers.  Three methods, each in a fresh process, one after the other, on a generated trace of each size (a kernel
and a host op per launch, every time a string; written once under ``--cache``):

- ``floor``: ``json.load`` of the file (what holding the document costs: the rewrite needs no more than this);
- ``before``: the rewrite as it was until h37-speed60 -- the whole document parsed, every event mended, the document
  written again (``json.dumps``);
- ``after``: ``times_as_numbers`` as it is (the file read by the columns' chunked reader, each chunk's events
  mended and written: ``parse._TextTimes``).

Peak is the process's RSS high-water mark (``VmHWM``) less its resident size before the call (interpreter and
imports); wall and CPU are the call's.  ``before`` and ``after`` outputs are compared byte for byte.  Prints a
markdown table with the load average (the machine may be shared: CPU says more than wall there).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path[:0] = [REPO]


def _status_kb(key: str) -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(key + ":"))


def _cpu() -> float:
    import resource

    me = resource.getrusage(resource.RUSAGE_SELF)
    return me.ru_utime + me.ru_stime


def _before(src) -> bytes | None:
    """The rewrite until h37-speed60: the whole document in memory."""
    from tb_gpu_advisor.formats.kineto import parse

    doc, events = parse._whole_document(src)
    if not isinstance(events, list):
        return None
    changed = sum(parse._mend_text_times(e) for e in events)
    return json.dumps(doc).encode() if changed else None


def child(method: str, path: str) -> None:
    """In a fresh process: one method on ``path``; prints its row's numbers as JSON."""
    import hashlib

    from tb_gpu_advisor.formats.kineto import parse

    fn = {"floor": lambda f: json.load(gzip.open(f) if path.endswith(".gz") else f),
          "before": _before, "after": parse.times_as_numbers}[method]
    rss = _status_kb("VmRSS")
    with open(path, "rb") as f:
        t, c = time.perf_counter(), _cpu()
        out = fn(f)
        wall, cpu = time.perf_counter() - t, _cpu() - c
    digest = hashlib.sha256(out).hexdigest()[:12] if isinstance(out, bytes) else None
    print(json.dumps({"peak_kb": _status_kb("VmHWM") - rss, "wall": wall, "cpu": cpu, "digest": digest}))


def write_trace(path: str, mb: int) -> None:
    """A trace of about ``mb`` MB whose every ``ts`` and ``dur`` is a string."""
    events, size, i = [], 0, 0
    while size < mb * 1_000_000:
        ts = 1_700_000_000_000 + 20 * i
        launch = {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                  "ts": f"{ts}.125", "dur": "4", "args": {"correlation": i, "external id": i}}
        kernel = {"ph": "X", "cat": "kernel", "name": f"void gemm_{i % 40}<float, 128>(Params)", "pid": 0,
                  "tid": 7, "ts": f"{ts + 6}.5", "dur": f"{11 + i % 5}",
                  "args": {"correlation": i, "grid": [64, 1, 1], "block": [128, 1, 1], "device": 0, "stream": 7}}
        events += (launch, kernel)
        size += 2 * 240
        i += 1
    doc = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100"}], "traceEvents": events}
    text = json.dumps(doc).encode()
    with (gzip.open if path.endswith(".gz") else open)(path, "wb") as f:
        f.write(text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", default="8,32")
    ap.add_argument("--gz", action="store_true", help="the traces gzip-compressed")
    ap.add_argument("--cache", default="/tmp/text-times")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return
    os.makedirs(args.cache, exist_ok=True)
    rows = []
    for mb in [int(x) for x in args.mb.split(",")]:
        path = os.path.join(args.cache, f"text_times_{mb}mb.json" + (".gz" if args.gz else ""))
        if not os.path.exists(path):
            write_trace(path, mb)
        text_mb = mb  # the document's size (the file's, gunzipped)
        got = {}
        for method in ("floor", "before", "after"):
            out = subprocess.run([sys.executable, __file__, "--child", method, path], capture_output=True, text=True,
                                 check=True, env={**os.environ, "PYTHONPATH": REPO})
            got[method] = json.loads(out.stdout.strip().splitlines()[-1])
        same = got["before"]["digest"] == got["after"]["digest"]
        for method, m in got.items():
            rows.append(f"| {text_mb} MB{' gz' if args.gz else ''} | {method} | {m['peak_kb'] / 1024:.1f} MB | "
                        f"{m['peak_kb'] / 1024 / text_mb:.2f}x | {m['wall']:.2f} s | {m['cpu']:.2f} s | "
                        f"{'' if method == 'floor' else ('same' if same else 'DIFFERS')} |")
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print("| document | method | peak over start | x document | wall | CPU | before = after |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
