"""How often an analysis decodes each Kineto file, against the floor of decoding each once (session 59 *Left*).

    python benchmarks/reads_once.py [--before CHECKOUT] [--cache-dir DIR] [--repeat 1]

Why: two readings decode a file more than the report reads it.  The layout asks whether two files that open alike
are one process's parts by their ids (``layout._ids_agree`` -> ``adapter.process_of``: the file decoded whole at
discovery, then again by the reader), and a rank in its own folder asks each peer's one-time spans
(``runtime.pipeline.peer_start_up``: the peer decoded whole and its job read, then decoded again for its own report).
This prints, per set, the decodes of each file (``parse_trace`` calls), wall time and peak memory of ``report`` over
the set, and the floor: each file of the set decoded once by the reader (``formats.read``), one after the other.

Sets: real-h100-torch (five runs of one file each), the wild fixtures ``dlrm_v100`` (8 ranks in one folder) and
``tp_rtx4090_two_ranks`` (2 ranks in one folder, and in ``rank0/``, ``rank1/``: each rank decodes its peer), a
generated 8-rank DDP job with each rank in its own folder (``synthetic.torchtrace.write_one_gpu_apart`` +
``into_rank_folders``), and ``torch_tiny_ops`` (7.3 MB) cut in two at its middle event: one process's window as two
files (the layout's parts).

Every measurement runs in a fresh child process after a warm-up report of a small trace (imports and first-call
costs not counted); peak is the child's high-water mark (``VmHWM``, reset by ``/proc/self/clear_refs``) less its
resident size before the measured work, MB.  ``--before``: the same children run from another checkout (the code
before a change); the reports of both are compared (versions aside) and the table says whether they are identical.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SHARED = os.path.join(REPO, "..", "..", "shared", "profiles")
if not os.path.isdir(SHARED):
    SHARED = "/work/shared/profiles"
WILD = os.path.join(REPO, "tests", "fixtures", "wild")
sys.path.insert(0, HERE)
from procfs import status_kb  # noqa: E402 - the benchmarks' one /proc reader


# -- child side -----------------------------------------------------------------------------------------------

def _status_kb(key: str) -> int:
    return status_kb(key) or 0


def _counting() -> collections.Counter:
    """Each path's ``parse_trace`` calls (the reader's whole decode of a Kineto file), counted from here on."""
    from tb_gpu_advisor.formats.kineto import adapter

    counts: collections.Counter = collections.Counter()
    decode = adapter.parse_trace

    def counted(src, **kw):  # noqa: ANN001, ANN003, ANN202
        counts[kw.get("name") or getattr(src, "name", src)] += 1
        return decode(src, **kw)

    adapter.parse_trace = counted
    return counts


def _report(logdir: str, run: str | None, out: str) -> None:
    from tb_gpu_advisor.cli.main import main

    main(["report", logdir, *(["--run", run] if run else []), "--format", "json", "--cache-dir", "off",
          "--output", out])


def _floor(logdir: str, run: str | None) -> None:
    """Each Kineto file of the set decoded once by the reader (``adapter.read_trace``: its columns and its trace), one
    after the other, no discovery (which decodes the parts it checks)."""
    from tb_gpu_advisor.formats.kineto.adapter import read_trace

    for top, _, names in sorted(os.walk(os.path.join(logdir, run) if run else logdir)):
        for name in sorted(names):
            if name.endswith((".json", ".json.gz")) and "TRUTH" not in name:
                trace = read_trace(os.path.join(top, name))
                del trace


def _reset_peak() -> None:
    """The high-water mark set to the resident size now (``/proc/self/clear_refs``: 5)."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def child(mode: str, logdir: str, run: str, out: str, warm: str) -> None:
    import gc

    _report(warm, None, os.devnull)
    counts = _counting()
    gc.collect()
    _reset_peak()
    base, t = _status_kb("VmRSS"), time.perf_counter()
    if mode == "floor":
        _floor(logdir, run or None)
    else:
        _report(logdir, run or None, out)
    print(json.dumps({"wall_s": time.perf_counter() - t, "peak_mb": (_status_kb("VmHWM") - base) / 1024,
                      "decodes": dict(counts)}))


# -- parent side ----------------------------------------------------------------------------------------------

def _gen_ranks(cache: str) -> str:
    """An 8-rank DDP job on one machine, each rank's file in its own folder (``rank<r>/``): a logdir of 8 runs."""
    out = os.path.join(cache, "ranks8")
    if not os.path.isdir(os.path.join(out, "one_gpu_apart")):
        sys.path.insert(0, REPO)
        from synthetic import torchtrace as tt

        made = tt.write_one_gpu_apart(out, gpus=8, steps=40)
        tt.into_rank_folders(made["paths"])
    return os.path.join(out, "one_gpu_apart")


def _pair_in_folders(cache: str) -> str:
    """The wild ``tp_rtx4090_two_ranks`` pair with each rank's file in ``rank<r>/`` (its files state their rank): a
    logdir of 2 runs whose peers are read on their shared clock."""
    out = os.path.join(cache, "pair_folders")
    if not os.path.isdir(out):
        src = os.path.join(WILD, "tp_rtx4090_two_ranks")
        for name in sorted(os.listdir(src)):
            with gzip.open(os.path.join(src, name), "rt", encoding="utf-8") as f:
                rank = json.load(f)["distributedInfo"]["rank"]
            os.makedirs(os.path.join(out, f"rank{rank}"))
            shutil.copy(os.path.join(src, name), os.path.join(out, f"rank{rank}", name))
    return out


def _cut_in_two(cache: str) -> str:
    """``torch_tiny_ops`` written as two files cut at its middle event (each with the header and metadata events):
    one process's window in two parts, which the layout checks by their ids."""
    out = os.path.join(cache, "parts", "tiny_ops_in_two")
    if os.path.isdir(out):
        return os.path.dirname(out)
    src = os.path.join(SHARED, "real-h100-torch", "torch_tiny_ops")
    (name,) = [p for p in os.listdir(src) if ".pt.trace" in p]
    with open(os.path.join(src, name), "rb") as f:
        doc = json.load(f)
    meta = [e for e in doc["traceEvents"] if e.get("ph") == "M"]
    timed = sorted(e["ts"] for e in doc["traceEvents"] if e.get("ph") != "M" and "ts" in e)
    mid = timed[len(timed) // 2]
    rest = [e for e in doc["traceEvents"] if e.get("ph") != "M" and "ts" in e]
    os.makedirs(out)
    stem = name.split(".")[0]
    for k, half in enumerate(([e for e in rest if e["ts"] < mid], [e for e in rest if e["ts"] >= mid])):
        with gzip.open(os.path.join(out, f"{stem}_{k}.pt.trace.json.gz"), "wt") as f:
            json.dump({**doc, "traceEvents": meta + half}, f)
    return os.path.dirname(out)


def sets(cache: str) -> list[tuple[str, str, str]]:
    """(label, logdir, run or "") of each set measured."""
    return [("real-h100-torch (5 runs)", os.path.join(SHARED, "real-h100-torch"), ""),
            ("wild dlrm_v100 (8 ranks, one folder)", WILD, "dlrm_v100"),
            ("wild tp_rtx4090_two_ranks", WILD, "tp_rtx4090_two_ranks"),
            ("wild tp_rtx4090_two_ranks, rank folders", _pair_in_folders(cache), ""),
            ("generated 8 ranks, rank folders", _gen_ranks(cache), ""),
            ("torch_tiny_ops cut in two (parts)", _cut_in_two(cache), "")]


def run_child(checkout: str, mode: str, logdir: str, run: str, out: str, warm: str) -> dict:
    env = dict(os.environ, PYTHONPATH=checkout, TB_GPU_ADVISOR_CACHE_DIR="off")
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", mode, logdir, run, out, warm],
                       capture_output=True, text=True, env=env, cwd=checkout, timeout=900)
    if p.returncode:
        raise SystemExit(f"child {mode} {logdir} {run} failed:\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def _comparable(path: str) -> object:
    """A report file without what differs by version alone."""
    with open(path) as f:
        text = f.read()
    doc = json.loads(text)

    def strip(o):  # noqa: ANN001, ANN202
        if isinstance(o, dict):
            return {k: strip(v) for k, v in o.items() if k not in ("analyzer_version", "version", "generated_at")}
        if isinstance(o, list):
            return [strip(v) for v in o]
        return o

    return strip(doc)


def _decodes(d: dict) -> str:
    """``n files: k x each`` (or the counts)."""
    c = collections.Counter(d.values())
    each = ", ".join(f"{n} file{'s' if n > 1 else ''} x{k}" for k, n in sorted(c.items()))
    return f"{sum(d.values())} ({each})"


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        child(*sys.argv[2:7])
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", help="a checkout of the code before the change")
    ap.add_argument("--cache-dir", default=os.path.join(tempfile.gettempdir(), "reads-once"))
    args = ap.parse_args()
    os.makedirs(args.cache_dir, exist_ok=True)
    warm = os.path.join(WILD, "tp_rtx4090_cold_forward")
    trees = [("after", REPO)] + ([("before", os.path.abspath(args.before))] if args.before else [])
    print("| set | code | decodes | wall s | peak MB | floor decodes | floor wall s | floor peak MB | same report |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label, logdir, run in sets(args.cache_dir):
        floor = run_child(REPO, "floor", logdir, run, os.devnull, warm)
        outs = {}
        for code, tree in trees:
            outs[code] = os.path.join(args.cache_dir, f"{code}.json")
            r = run_child(tree, "report", logdir, run, outs[code], warm)
            same = ("" if len(outs) < 2 else
                    "yes" if _comparable(outs["after"]) == _comparable(outs[code]) else "NO")
            print(f"| {label} | {code} | {_decodes(r['decodes'])} | {r['wall_s']:.2f} | {r['peak_mb']:.0f} | "
                  f"{_decodes(floor['decodes'])} | {floor['wall_s']:.2f} | {floor['peak_mb']:.0f} | {same} |",
                  flush=True)
    shutil.rmtree(os.path.join(args.cache_dir, "after.json"), ignore_errors=True)


if __name__ == "__main__":
    main()
