"""How to read PyTorch profiler traces (``*.pt.trace.json``) fast and in bounded memory: a measurement (issue #10).

    python benchmarks/kineto_parse.py [--src TRACE] [--sizes 50,200] [--methods ours-json,ours-msgspec,stdlib,orjson,msgspec,ijson]

Why: PyTorch traces of 0.5-2 GB are common, and the reader's design (full parse, typed decode, streaming, or a
scanner of our own) should follow measured time and peak memory, not taste.  Each method turns the trace into
the columns the analysis needs (ts, dur, a category code, a name id, the launch correlation), so the
comparison includes what happens after parsing.

How: a real trace (default: ``../shared/profiles/real-h100-torch/torch_healthy_bf16``) is repeated, shifted in
time and correlation ids, up to each size.  Every (method, size) runs in a fresh child process: wall time of
the read, and the peak RSS above the child's RSS after its imports (``ru_maxrss`` against ``VmRSS``).
Methods whose library is not installed are skipped (none of them is a dependency of the plugin).  ``ours-*``:
the Advisor's reader (``formats/kineto/parse.py``) with each of its decoders.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SRC = os.path.join(HERE, "..", "..", "shared", "profiles", "real-h100-torch", "torch_healthy_bf16")
_STEP = re.compile(r"^ProfilerStep#(\d+)$")
WANTED = ("ph", "cat", "name", "ts", "dur", "pid", "tid")


def make_trace(src: str, target_mb: float, out: str) -> int:
    """Writes ``out``: ``src``'s events repeated to ~``target_mb``; returns the event count.

    Each copy is shifted in time, correlation and External ids, and its ``ProfilerStep#N`` renumbered, so the
    analysis sees one long capture of distinct steps (not the same ten steps again and again)."""
    with open(src, encoding="utf-8") as f:
        doc = json.load(f)
    events = doc.pop("traceEvents")
    xs = [e for e in events if e.get("ph") == "X" and "ts" in e]
    span = max(e["ts"] + e.get("dur", 0) for e in xs) - min(e["ts"] for e in xs) + 1000.0
    head = json.dumps(doc)[:-1] + ', "traceEvents": ['
    steps = [int(m.group(1)) for e in xs for m in [_STEP.match(str(e.get("name")))] if m]
    step_stride = max(steps) + 1 if steps else 0
    n, size, k = 0, len(head), 0
    with open(out, "w", encoding="utf-8") as f:
        f.write(head)
        while size < target_mb * 1e6:
            for e in events:
                e2 = dict(e)
                if "ts" in e2:
                    e2["ts"] = e2["ts"] + k * span
                m = _STEP.match(str(e2.get("name")))
                if m and k:  # each copy's steps are new steps (ProfilerStep#N numbers are unique in a trace)
                    e2["name"] = f"ProfilerStep#{int(m.group(1)) + k * step_stride}"
                args = e2.get("args")
                if isinstance(args, dict):  # launch links and op ids stay unique per copy
                    e2["args"] = {**args, **{key: args[key] + k * 1_000_000 for key in ("correlation", "External id")
                                             if type(args.get(key)) is int}}
                text = ("," if n else "") + json.dumps(e2, separators=(",", ":"))
                f.write(text)
                size += len(text)
                n += 1
            k += 1
        f.write("]}")
    return n


def _columns(events) -> int:
    """The analysis' columns from parsed event dicts: numpy arrays of ts, dur, category, name id, correlation."""
    import numpy as np

    cats: dict[str, int] = {}
    names: dict[str, int] = {}
    ts, dur, cat, name, corr = [], [], [], [], []
    for e in events:
        if e.get("ph") != "X":
            continue
        ts.append(e.get("ts", 0.0))
        dur.append(e.get("dur", 0.0))
        cat.append(cats.setdefault(e.get("cat") or "", len(cats)))
        name.append(names.setdefault(e.get("name") or "", len(names)))
        args = e.get("args")
        corr.append(args.get("correlation", -1) if isinstance(args, dict) else -1)
    cols = (np.asarray(ts, np.float64), np.asarray(dur, np.float64), np.asarray(cat, np.int32),
            np.asarray(name, np.int32), np.asarray(corr, np.int64))
    return len(cols[0])


def _read_stdlib(path: str) -> int:
    with open(path, encoding="utf-8") as f:
        return _columns(json.load(f)["traceEvents"])


def _read_orjson(path: str) -> int:
    import orjson

    with open(path, "rb") as f:
        return _columns(orjson.loads(f.read())["traceEvents"])


def _read_msgspec(path: str) -> int:
    """Typed decode: only the fields the analysis reads become Python objects; the rest is skipped."""
    import msgspec
    import numpy as np

    # defstruct: annotations are real types here (this module's annotations are strings)
    args_t = msgspec.defstruct("Args", [("correlation", int, -1)])
    event_t = msgspec.defstruct("Event", [("ph", str, ""), ("cat", str, ""), ("name", str, ""), ("ts", float, 0.0),
                                          ("dur", float, 0.0), ("args", args_t | None, None)])
    trace_t = msgspec.defstruct("Trace", [("traceEvents", list[event_t], [])])

    with open(path, "rb") as f:
        trace = msgspec.json.decode(f.read(), type=trace_t)
    xs = [e for e in trace.traceEvents if e.ph == "X"]
    cats: dict[str, int] = {}
    names: dict[str, int] = {}
    cols = (np.fromiter((e.ts for e in xs), np.float64, len(xs)), np.fromiter((e.dur for e in xs), np.float64, len(xs)),
            np.fromiter((cats.setdefault(e.cat, len(cats)) for e in xs), np.int32, len(xs)),
            np.fromiter((names.setdefault(e.name, len(names)) for e in xs), np.int32, len(xs)),
            np.fromiter((e.args.correlation if e.args else -1 for e in xs), np.int64, len(xs)))
    return len(cols[0])


def _read_ijson(path: str) -> int:
    import ijson

    with open(path, "rb") as f:
        return _columns(ijson.items(f, "traceEvents.item", use_float=True))


def _read_ours(decoder: str):
    """The Advisor's reader (formats/kineto/parse.py): chunks of whole events, each decoded by ``decoder``."""
    def read(path: str) -> int:
        from tb_gpu_advisor.formats.kineto.parse import parse_trace

        return len(parse_trace(path, decoder=decoder))
    return read


METHODS = {"ours-json": (_read_ours("json"), "json"), "ours-msgspec": (_read_ours("msgspec"), "msgspec"),
           "stdlib": (_read_stdlib, "json"), "orjson": (_read_orjson, "orjson"), "msgspec": (_read_msgspec, "msgspec"),
           "ijson": (_read_ijson, "ijson")}


def _rss_kb() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def child(method: str, path: str) -> None:
    fn, module = METHODS[method]
    __import__(module)
    import numpy  # noqa: F401 - imported before the baseline, like the plugin would have it

    if method.startswith("ours"):
        sys.path.insert(0, os.path.join(HERE, ".."))
        import tb_gpu_advisor.formats.kineto.parse  # noqa: F401 - the reader's own imports, before the baseline

    base = _rss_kb()
    t = time.perf_counter()
    n = fn(path)
    sec = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"events": n, "seconds": sec, "peak_kb": peak - base}))


def available(method: str) -> bool:
    try:
        __import__(METHODS[method][1])
        return True
    except ImportError:
        return False


def source_trace(src: str) -> str | None:
    """``src`` itself, or the first ``*.pt.trace.json`` in that folder; None (said on stderr) when there is none."""
    found = src if os.path.isfile(src) else (glob.glob(os.path.join(src, "*.pt.trace.json")) or [None])[0]
    if found is None:
        print(f"no .pt.trace.json in {src}", file=sys.stderr)
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", default=DEFAULT_SRC, help="a .pt.trace.json or a folder holding one (default %(default)s)")
    ap.add_argument("--sizes", default="50,200", help="trace sizes in MB (default %(default)s)")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--child", nargs=2, metavar=("METHOD", "FILE"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(*args.child)
        return 0
    src = source_trace(args.src)
    if src is None:
        return 2
    methods = [m for m in args.methods.split(",") if m]
    print(f"source: {os.path.relpath(src)}\n")
    print("| method | file MB | events | seconds | MB/s | peak MB above imports | peak / file | bytes / X event |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for mb in (float(x) for x in args.sizes.split(",")):
            path = os.path.join(tmp, f"trace_{mb:g}MB.pt.trace.json")
            make_trace(src, mb, path)
            size = os.path.getsize(path)
            for m in methods:
                if not available(m):
                    print(f"| {m} | {size / 1e6:.0f} | | | | not installed | | |")
                    continue
                out = subprocess.run([sys.executable, __file__, "--child", m, path], capture_output=True, text=True)
                if out.returncode != 0:
                    print(f"| {m} | {size / 1e6:.0f} | | | | failed: {out.stderr.strip().splitlines()[-1][:60]} | | |")
                    continue
                r = json.loads(out.stdout)
                peak = r["peak_kb"] * 1024
                print(f"| {m} | {size / 1e6:.0f} | {r['events']:,} | {r['seconds']:.2f} | {size / 1e6 / r['seconds']:.0f} | "
                      f"{peak / 1e6:.0f} | {peak / size:.1f}x | {peak / max(r['events'], 1):.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
