"""Nsight Systems exports: ``report`` against a bare sqlite3 fetch of the columns it reads, and nsys-ai (issue #38).

    python benchmarks/nsys_floor.py                          # 100 MB and 1 GB exports (generated once, cached)
    python benchmarks/nsys_floor.py --sizes 5MB --skip-peer  # a smoke run
    python benchmarks/nsys_floor.py --sizes 1GB --json rows.json   # issue30.py's machine-readable rows too

Why: issue #38 asks for every format against its floor and its peer in one run.  For an Nsight export the floor is
what no reader through Python's ``sqlite3`` beats: fetching the rows of the tables and columns our reader reads,
nothing built from them; the peer is nsys-ai, whose ``diagnose`` runs its default skill pack over the whole
profile and ranks findings, as ``report`` does.

Every measurement is a fresh process reaped with ``os.wait4`` (CPU = user + system, peak = the kernel's
high-water mark), the interpreter's start-up included:

* **floor**: ``sqlite3`` opens the export read-only and ``fetchmany``s :data:`FLOOR_COLUMNS` (each column that the
  table has), one query per table, one thread;
* **ours**: ``tb-gpu-advisor report FILE --format json`` with the report cache off;
* **pure**: the same with ``TB_GPU_ADVISOR_PURE_PYTHON=1``, where the Nsight reader has a compiled path
  (``tb_gpu_advisor.formats.nsys.compiled``); without one the row says "same reader" rather than measure twice;
* **nsys-ai**: ``nsys-ai diagnose COPY --format json`` on a private copy in a private folder (it writes indexes
  into the export and a session folder beside it).  nsys-ai prefers DuckDB, whose ``sqlite_scanner`` extension it
  downloads on first use; where that extension is absent and cannot be downloaded (no network here), nsys-ai falls
  back to plain ``sqlite3`` itself.  DuckDB's auto-install is turned off in the child so that its wall time holds no
  seconds of failed downloads (each ~5 s here): the path it runs is the same, and the row says which one ran.

The exports are ``nsys_large.py``'s (``<cache-dir>/nsys/<size>/run/report.sqlite``, written once).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path[:0] = [HERE, REPO]

import rows as rowlib  # (benchmarks/ is on the path now)
from run import _child_env, parse_size, run_process

#: What our reader fetches of an export (``formats/nsys/reader.py``): table -> columns.  The floor reads the same.
FLOOR_COLUMNS = {
    "CUPTI_ACTIVITY_KIND_RUNTIME": ("start", "end", "globalTid", "correlationId", "nameId"),
    "CUPTI_ACTIVITY_KIND_KERNEL": ("start", "end", "deviceId", "globalPid", "streamId", "correlationId",
                                   "demangledName", "graphId"),
    "CUPTI_ACTIVITY_KIND_MEMCPY": ("start", "end", "deviceId", "globalPid", "streamId", "correlationId", "bytes",
                                   "copyKind", "srcKind", "dstKind"),
    "CUPTI_ACTIVITY_KIND_MEMSET": ("start", "end", "deviceId", "globalPid", "streamId", "correlationId", "bytes"),
    "NVTX_EVENTS": ("start", "end", "eventType", "globalTid", "textId", "domainId", "text"),
    "StringIds": ("id", "value"),
    "ThreadNames": ("globalTid", "nameId"),
    "PROCESSES": ("pid", "name"),
}
FETCH_ROWS = 65536
NSYS_AI_CMD = ("diagnose", "--format", "json")


# -- children ------------------------------------------------------------------------------------------------------

def floor_child(path: str) -> None:
    """The floor: every row of :data:`FLOOR_COLUMNS` fetched through ``sqlite3``, then dropped; prints the count."""
    import pathlib
    import sqlite3

    con = sqlite3.connect(pathlib.Path(os.path.abspath(path)).as_uri() + "?mode=ro&immutable=1", uri=True)
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    n = 0
    for table, wanted in FLOOR_COLUMNS.items():
        if table not in tables:
            continue
        have = {r[1] for r in con.execute(f'PRAGMA table_info("{table}")')}
        cols = [c for c in wanted if c in have]
        cur = con.execute(f'SELECT {", ".join(cols)} FROM "{table}"')
        while batch := cur.fetchmany(FETCH_ROWS):
            n += len(batch)
    print(json.dumps({"rows": n}))


def nsys_ai_child(path: str, out: str) -> None:
    """nsys-ai's CLI on ``path``, with DuckDB's extension auto-install off (see the module's docstring)."""
    import duckdb

    connect = duckdb.connect

    def no_autoinstall(*a, **k):
        k["config"] = {**(k.get("config") or {}), "autoinstall_known_extensions": False}
        return connect(*a, **k)

    duckdb.connect = no_autoinstall
    from nsys_ai.__main__ import main

    sys.argv = ["nsys-ai", *NSYS_AI_CMD[:1], path, *NSYS_AI_CMD[1:], "-o", out]
    sys.exit(main())


# -- parent --------------------------------------------------------------------------------------------------------

def has_compiled_reader() -> bool:
    """Whether the Nsight reader has a compiled path to compare with its pure-Python one (the chooser module the
    other formats have, ``formats/<format>/compiled.py``).  Looked up as a file, not imported: importing the package
    would grow this process, and every measured child's peak RSS counts the pages of the process it came from."""
    return os.path.isfile(os.path.join(REPO, "tb_gpu_advisor", "formats", "nsys", "compiled.py"))


def _measure(label: str, argv: list[str], timeout: float, cap: int, env: dict, cwd: str | None = None):
    m, code, out, err = run_process(label, argv, timeout, cap, env, cwd=cwd)
    if m.status == "ok" and code not in (0, 1, 2):  # report: 1 = findings at --fail-on, 2 = a host with errors
        m.status, m.note = "error", f"exit {code}: {(err.strip().splitlines() or ['?'])[-1][:100]}"
    return m, out, err


def ours(path: str, timeout: float, cap: int, pure: bool = False) -> dict:
    env = _child_env({"TB_GPU_ADVISOR_CACHE_DIR": "off"})
    if pure:
        env["TB_GPU_ADVISOR_PURE_PYTHON"] = "1"
    argv = [sys.executable, "-P", "-m", "tb_gpu_advisor.cli", "report", path, "--format", "json", "-o", os.devnull]
    m, _, _ = _measure("ours", argv, timeout, cap, env)
    return rowlib.of_measurement(m)


def floor(path: str, timeout: float, cap: int) -> dict:
    m, out, _ = _measure("floor", [sys.executable, "-P", __file__, "--child", "floor", path], timeout, cap,
                         _child_env())
    rows = json.loads(out.strip().splitlines()[-1])["rows"] if m.status == "ok" and out.strip() else None
    return rowlib.of_measurement(m, what="sqlite3 fetch", rows=rows)


def nsys_ai(path: str, timeout: float, cap: int) -> dict:
    """nsys-ai ``diagnose`` on a private copy; its findings counted, the path it ran on named."""
    name = f"nsys-ai {NSYS_AI_CMD[0]}"
    if importlib.util.find_spec("nsys_ai") is None or importlib.util.find_spec("duckdb") is None:
        return rowlib.measured("not installed", name=name)
    with tempfile.TemporaryDirectory(prefix="nsys-ai-", dir=os.path.dirname(path)) as tmp:
        copy = os.path.join(tmp, "report.sqlite")
        shutil.copyfile(path, copy)
        out = os.path.join(tmp, "findings.json")
        m, _, err = _measure(name, [sys.executable, __file__, "--child", "nsys-ai", copy, out], timeout, cap,
                             _child_env(), cwd=tmp)
        findings = None
        try:
            with open(out, encoding="utf-8") as f:
                findings = len(json.load(f).get("findings", []))
        except (OSError, ValueError):
            if m.status == "ok":
                m.status, m.note = "error", f"no findings written: {(err.strip().splitlines() or ['?'])[-1][:100]}"
    engine = "sqlite3 (its fallback: DuckDB's sqlite_scanner is not installed)" if "falling back to sqlite3" in err \
        else "DuckDB"
    return rowlib.of_measurement(m, name=name, engine=engine, findings=findings)


def export(size: str, cache_dir: str) -> tuple[str, dict]:
    """``nsys_large.py``'s export of ``size`` (its label, e.g. ``1GB``) in ``cache_dir``, written once."""
    from nsys_large import export_of

    return export_of(parse_size(size), os.path.join(cache_dir, "nsys", size))


def cached_export(size: str, cache_dir: str) -> tuple[str, dict]:
    """The export of ``size``, written first by a child process where it is not cached yet: this process stays
    small, since every measured child's peak RSS counts the pages of the process it was started from."""
    path = os.path.join(cache_dir, "nsys", size, "run", "report.sqlite")
    if not (os.path.isfile(path) and os.path.isfile(path + ".json")):
        subprocess.run([sys.executable, __file__, "--sizes", size, "--generate-only", "--cache-dir", cache_dir],
                       check=True, stdout=subprocess.DEVNULL)
    with open(path + ".json", encoding="utf-8") as f:
        return path, json.load(f)


def measure(size: str, args, cap: int) -> dict:
    """Every measurement of the export of ``size``, as one row."""
    path, info = cached_export(size, args.cache_dir)
    print(f"measuring Nsight {size} ({info['bytes'] / 1e6:,.0f} MB) ...", file=sys.stderr, flush=True)
    parts = {"floor": floor(path, args.timeout, cap), "ours": ours(path, args.timeout, cap)}
    parts["pure"] = ours(path, args.timeout, cap, pure=True) if has_compiled_reader() else \
        rowlib.measured("same reader", note="the Nsight reader has no compiled path")
    if not args.skip_peer:
        parts["peer"] = nsys_ai(path, args.timeout, cap)
    return rowlib.row("nsight", "nsys_large", size, info["bytes"], "whole process", **parts)


def _cell(m: dict | None, key: str, fmt: str = "{:.2f}") -> str:
    if not m:
        return "–"
    if m.get("status") != "ok":
        return m.get("status", "–")
    return "–" if m.get(key) is None else fmt.format(m[key])


def render(rows: list[dict], info: str) -> str:
    lines = [info, "",
             ("| export | MB | floor (sqlite3 fetch) CPU s / wall s | ours CPU s | ours wall s | ours peak MB | "
              "ours / floor (CPU) | peak / file | pure | nsys-ai CPU s / wall s / peak MB | ours / nsys-ai (CPU) |"),
             "|---|---:|---|---:|---:|---:|---:|---:|---|---|---:|"]
    for r in rows:
        o, f, p, peer = r["ours"], r["floor"], r["pure"], r.get("peer")
        ok = o["status"] == "ok"
        ratio = f"{o['cpu_s'] / f['cpu_s']:.2f}x" if ok and f["status"] == "ok" else "–"
        per_file = f"{o['peak_mb'] * 1e6 / r['bytes']:.2f}x" if ok else "–"
        pure = p["status"] if p["status"] != "ok" else f"{p['cpu_s']:.2f} s CPU, {p['peak_mb']:,.0f} MB"
        peer_txt = "not run" if peer is None else (
            f"{peer['cpu_s']:.2f} / {peer['wall_s']:.2f} / {peer['peak_mb']:,.0f}" if peer["status"] == "ok"
            else f"{peer['status']}: {peer.get('note', '')}")
        peer_x = f"{o['cpu_s'] / peer['cpu_s']:.2f}x" if ok and peer and peer["status"] == "ok" else "–"
        lines.append(f"| {r['size']} | {r['bytes'] / 1e6:,.0f} | {_cell(f, 'cpu_s')} / {_cell(f, 'wall_s')} | "
                     f"{_cell(o, 'cpu_s')} | {_cell(o, 'wall_s')} | {_cell(o, 'peak_mb', '{:,.0f}')} | {ratio} | "
                     f"{per_file} | {pure} | {peer_txt} | {peer_x} |")
    engines = {r["peer"].get("engine") for r in rows if r.get("peer") and r["peer"].get("engine")}
    if engines:
        lines += ["", f"nsys-ai ran on: {'; '.join(sorted(engines))}."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100MB,1GB", help="export sizes (default %(default)s)")
    ap.add_argument("--cache-dir", default=os.path.join(REPO, ".bench"), help="where the exports are cached")
    ap.add_argument("--skip-peer", action="store_true", help="do not run nsys-ai")
    ap.add_argument("--timeout", type=float, default=3600.0, help="seconds a measurement may take")
    ap.add_argument("--mem-cap", default="16GB", help="kill a measurement above this RSS (no swap here)")
    ap.add_argument("--json", help="also write the rows (benchmarks/rows.py) to this file")
    ap.add_argument("--generate-only", action="store_true", help="write the exports into --cache-dir, measure nothing")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        {"floor": floor_child, "nsys-ai": nsys_ai_child}[a.child[0]](*a.child[1:])
        return 0
    a.cache_dir = os.path.abspath(a.cache_dir)
    if a.generate_only:
        for s in (s.strip() for s in a.sizes.split(",") if s.strip()):
            print(export(s, a.cache_dir))
        return 0
    load0 = os.getloadavg()
    rows = [measure(s.strip(), a, parse_size(a.mem_cap)) for s in a.sizes.split(",") if s.strip()]
    info = (f"Nsight exports (`nsys_large.py`), {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores, load "
            f"average {load0[0]:.2f} at start, {os.getloadavg()[0]:.2f} at end; one fresh process per cell, start-up "
            "included")
    print(render(rows, info))
    rowlib.write(a.json, rows)
    return 0 if all(r["ours"]["status"] == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
