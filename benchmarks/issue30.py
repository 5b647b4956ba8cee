"""Issues #30 and #38 in one run, one table: every format and shape against its floor and its peer, one machine, one load.

    python benchmarks/issue30.py --cache-dir /work/bench-cache                 # 100 MB and 1 GB (the full table)
    python benchmarks/issue30.py --sizes-mb 100 --cache-dir /work/bench-cache  # the 100 MB rows only
    python benchmarks/issue30.py --sizes-mb 5 --skip kineto_hta,json,startup   # a smoke run
    python benchmarks/issue30.py --generate-only --cache-dir /work/bench-cache  # write the inputs, measure nothing

Why one script and one table: the issue asks for the figures side by side, measured under the same load -- the
machine's load moves every figure by tens of percent, so tables measured an hour apart do not compare.  Each part is
its own benchmark (read its docstring for how it measures) and writes its rows as JSON (``rows.py``) beside its
markdown; this runs them back to back, then assembles one table, format x shape x size:

* ``xplane``: ``report`` on the compiled and the pure-Python decoder against a bare upb parse, the stock
  ``overview_page`` up to 200 MB (``xplane_floor.py``);
* ``kineto``: PyTorch ``report`` on the compiled scanner and the pure-Python path against msgspec's raw-args decode
  (``kineto_floor.py``);
* ``nsight``: Nsight ``report`` against a bare sqlite3 fetch of the columns it reads, and nsys-ai (``nsys_floor.py``);
* ``kineto_hta``: Holistic Trace Analysis on the PyTorch h100 traces (``hta_compare.py``, ``--hta-sizes-mb``);
* ``json`` and ``startup``: writing the report as JSON, and the CLI's fixed cost (``json_write.py``,
  ``cli_startup.py``): their own tables, after the one table.

Each row's verdicts are issue #38's targets (:func:`targets`).  The header names the machine, its load before and
after, the code's commit and what each format's decoder is; the whole is saved as ``<out-dir>/issue30-<time>.md``
and ``.json``.  Inputs are generated once into ``--cache-dir`` (``corpus/``, ``kineto/``, ``nsys/``), so a rerun only
measures.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path[:0] = [HERE]

import rows as rowlib

PARTS = ("xplane", "kineto", "nsight", "kineto_hta", "json", "startup")
#: Parts whose rows go into the one table (the others print their own table after it).
ROW_PARTS = ("xplane", "kineto", "nsight", "kineto_hta")
FORMAT_ORDER = {"xplane": 0, "pytorch": 1, "nsight": 2}
#: Files at least this big are judged by the issue's 1 GB targets, smaller ones by its 100 MB targets.
BIG_BYTES = 500e6


def size_labels(sizes_mb: list[int]) -> str:
    return ",".join(rowlib.size_label(s * 10**6) for s in sizes_mb)


def commands(sizes_mb: list[int], a: argparse.Namespace, out: str) -> dict[str, list[str]]:
    """Each part's command line: its sizes in the spelling that script takes, its cache, its rows' file."""
    mb, units, py = ",".join(str(s) for s in sizes_mb), size_labels(sizes_mb), sys.executable
    cache, kcache = a.cache_dir, os.path.join(a.cache_dir, "kineto")
    hta_mb = a.hta_sizes_mb or ",".join(str(s) for s in sizes_mb if s <= 100)
    hta = [py, os.path.join(HERE, "hta_compare.py"), "--sizes", hta_mb, "--cache-dir", kcache,
           "--json", os.path.join(out, "kineto_hta.json")]
    if a.hta_python:
        hta += ["--hta-python", a.hta_python]
    cmds = {"xplane": [py, os.path.join(HERE, "xplane_floor.py"), "--sizes", units, "--no-real", "--cache-dir", cache,
                       "--repeat", str(a.repeat), "--json", os.path.join(out, "xplane.json")],
            "kineto": [py, os.path.join(HERE, "kineto_floor.py"), "--sizes", mb, "--methods", "floor,ours,pure",
                       "--cache-dir", kcache, "--repeat", str(a.repeat), "--json", os.path.join(out, "kineto.json")],
            "nsight": [py, os.path.join(HERE, "nsys_floor.py"), "--sizes", units, "--cache-dir", cache,
                       "--json", os.path.join(out, "nsight.json")],
            "kineto_hta": hta,
            "json": [py, os.path.join(HERE, "json_write.py")],
            "startup": [py, os.path.join(HERE, "cli_startup.py")]}
    if a.table_repeat is not None:  # the json and startup parts' own rounds (their defaults: 5 and 9)
        cmds["json"] += ["--repeat", str(a.table_repeat)]
        cmds["startup"] += ["--repeat", str(a.table_repeat)]
    if not hta_mb:  # no size HTA runs at (it takes minutes per 100 MB)
        del cmds["kineto_hta"]
    return cmds


# -- the one table ---------------------------------------------------------------------------------------------

def merge(parts: list[list[dict]]) -> list[dict]:
    """Rows of every part, one per (format, shape, size): a part's measurements added to the row of the same key
    (HTA's peer to kineto_floor's PyTorch row), in the table's order."""
    by_key: dict[tuple, dict] = {}
    for rows in parts:
        for r in rows:
            key = (r["format"], r["shape"], r["size"])
            into = by_key.setdefault(key, {})
            for k, v in r.items():
                if v is not None and (k not in into or into[k] is None or isinstance(v, dict)):
                    into[k] = v
    from run import parse_size

    return sorted(by_key.values(), key=lambda r: (FORMAT_ORDER.get(r["format"], 9), parse_size(r["size"]), r["shape"]))


def _ok(m: dict | None) -> bool:
    return bool(m) and m.get("status") == "ok"


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def ratios(r: dict) -> dict[str, float | None]:
    """The row's ratios: ours / floor (CPU), peak RSS / file, ours / peer (CPU and wall, ours as the peer's script
    ran it where it did)."""
    o, f, p = r.get("ours"), r.get("floor"), r.get("peer")
    po = r.get("peer_ours") or o
    return {"cpu_x_floor": _ratio(o["cpu_s"], f["cpu_s"]) if _ok(o) and _ok(f) else None,
            "rss_x_file": _ratio(o["peak_mb"] * 1e6, r.get("bytes")) if _ok(o) else None,
            "cpu_x_peer": _ratio(po.get("cpu_s"), p.get("cpu_s")) if _ok(po) and _ok(p) else None,
            "wall_x_peer": _ratio(po.get("wall_s"), p.get("wall_s")) if _ok(po) and _ok(p) else None}


def targets(fmt: str, big: bool) -> list[tuple[str, str, float]]:
    """Issue #38's targets for a row: (what, the measure it reads, the limit).  Measures: ``cpu_x_floor``,
    ``rss_x_file``, ``cpu_x_peer`` (ratios, at most the limit) and ``wall_s`` (seconds, under the limit)."""
    if fmt == "xplane":
        out = [("CPU <= {:g}x upb", "cpu_x_floor", 1.0 if big else 1.5), ("RSS <= {:g}x file", "rss_x_file", 1.5)]
        return out + ([("wall < {:g} s", "wall_s", 10.0)] if big else [("<= {:g}x stock (CPU)", "cpu_x_peer", 0.04)])
    if fmt == "pytorch":
        out = [("CPU <= {:g}x msgspec", "cpu_x_floor", 1.0 if big else 2.0), ("RSS <= {:g}x file", "rss_x_file", 1.5)]
        return out + ([("wall < {:g} s", "wall_s", 10.0)] if big else [])
    if fmt == "nsight" and big:
        return [("wall < {:g} s", "wall_s", 30.0), ("RSS <= {:g}x file", "rss_x_file", 1.5)]
    return []


def verdicts(r: dict) -> list[dict]:
    """Each target of the row, met or not (None: not measured), with the value it was judged on and the measure it
    reads (the verdict column it goes in)."""
    rs = ratios(r)
    big = (r.get("bytes") or 0) >= BIG_BYTES
    out = []
    for what, measure, limit in targets(r["format"], big):
        value = r["ours"].get("wall_s") if measure == "wall_s" and _ok(r.get("ours")) else \
            None if measure == "wall_s" else rs.get(measure)
        met = None if value is None else (value < limit if measure == "wall_s" else value <= limit)
        out.append({"target": what.format(limit), "measure": measure, "value": value, "met": met,
                    "unit": "s" if measure == "wall_s" else "x"})
    return out


def _num(x: float | None, fmt: str = "{:.2f}") -> str:
    return "–" if x is None else fmt.format(x)


def _m(m: dict | None) -> list[str]:
    """CPU s, wall s, peak MB of one measurement, or why it has none (in the first cell)."""
    if not m:
        return ["not run", "", ""]
    if m.get("status") != "ok":
        return [m.get("status", "?"), "", ""]
    return [_num(m.get("cpu_s")), _num(m.get("wall_s")), _num(m.get("peak_mb"), "{:,.0f}")]


def _verdict_text(v: dict) -> str:
    if v["met"] is None:
        return f"not measured ({v['target']})"
    value = f"{v['value']:.1f} s" if v["unit"] == "s" else f"{v['value']:.{3 if v['value'] < 0.1 else 2}f}x"
    return f"{'met' if v['met'] else '**not met**'}: {value} ({v['target']})"


#: One verdict column per kind of target: (the measure it judges, its heading).
VERDICT_COLUMNS = (("cpu_x_floor", "verdict: CPU vs floor"), ("rss_x_file", "verdict: RSS"),
                   ("wall_s", "verdict: wall"), ("cpu_x_peer", "verdict: vs peer"))
HEADER = ("| format | shape | size | file MB | CPU counted | ours CPU s | ours wall s | ours peak MB | pure CPU s "
          "| pure wall s | pure peak MB | floor | floor CPU s | ours / floor (CPU) | RSS / file | peer "
          "| peer CPU s / wall s | ours / peer (CPU; wall) | " + " | ".join(h for _, h in VERDICT_COLUMNS) + " |")


def render_table(rows: list[dict]) -> str:
    """The one table: a line per row, the verdicts of issue #38's targets in the last columns ("–": no target of
    that kind for this format and size)."""
    align = ["---"] * 5 + ["---:"] * 6 + ["---"] + ["---:"] * 3 + ["---", "---:", "---:"] + ["---"] * len(VERDICT_COLUMNS)
    lines = [HEADER, "|" + "|".join(align) + "|"]
    for r in rows:
        rs, f, p, peer = ratios(r), r.get("floor"), r.get("pure"), r.get("peer")
        pure = _m(p) if not p or p.get("status") == "ok" else [p.get("status"), "", ""]
        peer_txt = "not run" if not peer else peer.get("name", "peer")
        peer_vals = ("–" if not peer else f"{_num(peer.get('cpu_s'))} / {_num(peer.get('wall_s'))}" if _ok(peer)
                     else f"{peer.get('status')}{': ' + peer['note'] if peer.get('note') else ''}")
        peer_x = "–" if rs["cpu_x_peer"] is None else f"{_num(rs['cpu_x_peer'], '{:.3f}x')}; {_num(rs['wall_x_peer'], '{:.3f}x')}"
        cells = [r["format"], r["shape"], r["size"], _num((r.get("bytes") or 0) / 1e6, "{:,.0f}"),
                 r.get("counted", ""), *_m(r.get("ours")), *pure,
                 (f or {}).get("what", "–"), _m(f)[0], _num(rs["cpu_x_floor"], "{:.2f}x"),
                 _num(rs["rss_x_file"], "{:.2f}x"), peer_txt, peer_vals, peer_x]
        judged = {v["measure"]: _verdict_text(v) for v in verdicts(r)}
        cells += [judged.get(measure, "–") for measure, _ in VERDICT_COLUMNS]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


# -- the run ---------------------------------------------------------------------------------------------------

def decoders() -> str:
    """What each format's reader is in this checkout (``tb-gpu-advisor --version``: XPlane, PyTorch JSON, memory
    snapshots, Nsight Systems)."""
    p = subprocess.run([sys.executable, "-m", "tb_gpu_advisor.cli", "--version"], capture_output=True, text=True,
                       cwd=REPO, env={**os.environ, "PYTHONPATH": REPO + os.pathsep + os.environ.get("PYTHONPATH", "")},
                       check=False)
    return "; ".join(ln.strip() for ln in p.stdout.splitlines()[1:] if ln.strip())


def machine() -> dict[str, str]:
    from run import _code_version
    from run import machine as run_machine

    m = run_machine()
    return {"host": platform.node(), "CPU": m["CPU"], "cores": m["cores"], "RAM": m["RAM"], "python": m["python"],
            "numpy": m["numpy"], "protobuf": m["protobuf"], "code": _code_version(), "decoders": decoders()}


def _load() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def run_part(name: str, cmd: list[str], timeout: float) -> tuple[str, int, float]:
    """One part's markdown (its stdout, or why it has none), exit code and wall seconds."""
    print(f"== {name}: {' '.join(cmd)}", file=sys.stderr, flush=True)
    t = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=timeout, check=False)
        body, rc = p.stdout.strip() or p.stderr.strip()[-2000:], p.returncode
        if rc != 0 and p.stderr.strip():
            body += "\n\n```\n" + p.stderr.strip()[-1500:] + "\n```"
    except subprocess.TimeoutExpired:
        body, rc = f"(stopped after {timeout:g} s)", -1
    return body, rc, time.time() - t


def generate(sizes_mb: list[int], cache: str) -> None:
    """Write every input of the table into ``cache``, each by its part's own generator (which skips what is already
    there), each in a child process: this one must stay small, since a child's peak RSS counts the pages it was
    forked with."""
    labels, py = size_labels(sizes_mb), sys.executable
    steps = [[py, os.path.join(HERE, "run.py"), "--sizes", labels, "--shapes", "dense,tf,stats", "--generate-only",
              "--cache-dir", cache, "--timeout", "3600"],
             [py, os.path.join(HERE, "kineto_floor.py"), "--sizes", ",".join(map(str, sizes_mb)), "--generate-only",
              "--cache-dir", os.path.join(cache, "kineto")],
             [py, os.path.join(HERE, "nsys_floor.py"), "--sizes", labels, "--generate-only", "--cache-dir", cache]]
    for cmd in steps:
        print(f"== {' '.join(cmd)}", file=sys.stderr, flush=True)
        subprocess.run(cmd, cwd=REPO, check=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes-mb", default="100,1000", help="input sizes in MB (default %(default)s)")
    ap.add_argument("--skip", default="", help=f"parts to leave out, comma-separated, of {', '.join(PARTS)}")
    ap.add_argument("--hta-python", default=None, help="an interpreter with HolisticTraceAnalysis (default: this one)")
    ap.add_argument("--hta-sizes-mb", default=None, help="PyTorch sizes HTA runs on (default: those of --sizes-mb up "
                                                         "to 100; it takes minutes per 100 MB)")
    ap.add_argument("--cache-dir", default=os.path.join(REPO, ".bench"), help="where the inputs are generated once")
    ap.add_argument("--out-dir", default=os.path.join(REPO, ".bench"), help="where the report is saved")
    ap.add_argument("--repeat", type=int, default=1, help="fresh processes per XPlane and PyTorch measurement")
    ap.add_argument("--table-repeat", type=int, default=None,
                    help="rounds of the json and startup parts (default: their own, 5 and 9; 1 for a smoke run)")
    ap.add_argument("--timeout", type=float, default=7200.0, help="seconds per part")
    ap.add_argument("--generate-only", action="store_true", help="write the inputs into --cache-dir, measure nothing")
    ap.add_argument("--render", metavar="SAVED_JSON", help="print the one table of a saved run again, measure nothing")
    a = ap.parse_args(argv)
    sizes = [int(s) for s in a.sizes_mb.split(",") if s.strip()]
    skip = {s.strip() for s in a.skip.split(",") if s.strip()}
    unknown = skip - set(PARTS)
    if unknown:
        ap.error(f"unknown parts: {', '.join(sorted(unknown))} (parts: {', '.join(PARTS)})")
    a.cache_dir = os.path.abspath(a.cache_dir)
    if a.render:
        print(render_saved(a.render))
        return 0
    if a.generate_only:
        generate(sizes, a.cache_dir)
        return 0
    info, load0, t0 = machine(), _load(), time.time()
    sections, failed, parts_rows = [], [], []
    with tempfile.TemporaryDirectory(prefix="issue30-rows-") as out:
        for name, cmd in commands(sizes, a, out).items():
            if name in skip:
                continue
            body, rc, wall = run_part(name, cmd, a.timeout)
            if rc != 0:
                failed.append(name)
            sections.append((name, body, rc, wall))
            if name in ROW_PARTS:
                parts_rows.append(rowlib.read(os.path.join(out, f"{name}.json")))
    load1 = _load()
    table = merge(parts_rows)
    stamp, wall = time.strftime("%Y-%m-%d %H:%M:%S %Z"), time.time() - t0
    text = render(table, sections, info, load0, load1, wall, stamp)
    print(text)
    os.makedirs(a.out_dir, exist_ok=True)
    base = os.path.join(a.out_dir, f"issue30-{time.strftime('%Y%m%d-%H%M%S')}")
    with open(base + ".md", "w", encoding="utf-8") as f:
        f.write(text)
    with open(base + ".json", "w", encoding="utf-8") as f:
        json.dump({"stamp": stamp, "wall_s": wall, "machine": info, "load_start": load0, "load_end": load1,
                   "argv": sys.argv[1:],
                   "rows": [{**r, "verdicts": verdicts(r)} for r in table],
                   "parts": {n: {"exit": rc, "wall_s": w} for n, _, rc, w in sections}}, f, indent=1)
    print(f"saved {base}.md and .json", file=sys.stderr)
    return 1 if failed else 0


def render_saved(path: str) -> str:
    """The header and the one table of a run saved by :func:`main` (its ``.json``), rendered by this code."""
    with open(path, encoding="utf-8") as f:
        d = json.load(f)
    table = merge([[{k: v for k, v in r.items() if k != "verdicts"} for r in d["rows"]]])
    return render(table, [], d["machine"], d["load_start"], d["load_end"], d.get("wall_s") or 0.0, d.get("stamp", "?"))


def render(table: list[dict], sections: list[tuple], info: dict, load0: str, load1: str, wall: float,
           stamp: str) -> str:
    """The saved report: machine, load and code; the one table; each part's own markdown after it."""
    out = [f"# Issues #30 and #38: one run, one table ({stamp})", "",
           *(f"- {k}: {v}" for k, v in info.items()),
           f"- Start: load average {load0}", f"- End: load average {load1}; the run took {wall / 60:.1f} min", "",
           ("CPU counted: *whole process* = a fresh `report` process, interpreter start-up and imports included (as "
            "its floor's process); *after a warm-up report* = the `report` call after one on a small trace in the "
            "same process, against the decode alone (`kineto_floor.py`).  Ours / peer compares whole processes: for "
            "PyTorch, ours as `hta_compare.py` ran it beside HTA.  One fresh process per cell."), "",
           render_table(table)]
    for name, body, rc, w in sections:
        out += [f"## {name} ({w:.0f} s wall{'' if rc == 0 else f', exit {rc}'})", "", body, ""]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
