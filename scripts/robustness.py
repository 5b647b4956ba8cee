#!/usr/bin/env python
"""Robustness figures (issue #12 item 7): what hostile or broken input does, as numbers.

    python scripts/robustness.py                      # 60 s of fuzzing, every other check
    python scripts/robustness.py --fuzz-seconds 600   # the recorded run (docs/robustness.md)
    python scripts/robustness.py --bench-file .bench/corpus/bench_100MB_*.xplane.pb   # isolation cost on it

Not a test: it prints a markdown report (timings vary by machine).  Every
check runs locally; the HTTP checks go through TensorBoard's real WSGI app
in this process, never over the network.  Sections:

1. hand-made bad files (``synthetic.hostile.KINDS``): outcome and time of each;
2. mutation fuzz: executions, outcomes, escaped exceptions (anything but a report or ProfileReadError);
3. the HLO suffix regex before and after, on an 80 kB name;
4. amplification: peak memory and time of empty events and of 100k empty planes;
5. isolation: a limited child per analysis -- its overhead, and that a runaway child fails alone
   while the parent's threads keep running (largest stall of a 10 ms heartbeat thread);
6. cache faults: FIFO, /dev/zero symlink, gzip bomb, failed reports, precompute into a full cache;
7. files still being written: a capture copied in while the tab polls;
8. what must keep holding: hostile requests never read outside the logdir; 50 concurrent clients;
10. PyTorch traces with one long event or times no clock writes (``synthetic.hostile_kineto``): outcome per kind,
    and the cost of one long name, gap or argument at 8, 32 and 128 MB (linear: the same seconds and peak per MB);
11. hostile SQLite (Nsight exports, ``scripts/robustness_sqlite.py``): views, triggers, recursive CTE views, virtual
    tables, computed columns, names that are no UTF-8, huge rows, truncation, fuzzed bytes; the swap race.
12. snapshot pickles (``synthetic.hostile_pickles``): each read in a limited child, its outcome, time and peak memory,
    and a count per defect class.
13. the inputs of sessions 36-37 (``synthetic.hostile_inputs``): viewer pages, snapshot values, Git LFS pointers,
    memory timelines, each reported by the CLI in a limited child (outcome, time, peak memory), the peak memory
    of a large viewer page against its size, and 500 snapshots with their values fuzzed (nothing may escape).
"""

from __future__ import annotations

import argparse
import collections
import glob
import io
import json
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import robustness_sqlite  # noqa: E402  (scripts/, beside this file)
from synthetic import hostile  # noqa: E402
from tb_gpu_advisor.formats.xplane.reader import ProfileReadError  # noqa: E402
from tb_gpu_advisor.runtime import cache as cache_mod  # noqa: E402
from tb_gpu_advisor.runtime import isolation  # noqa: E402

SESSION = hostile.SESSION


def say(line: str = "") -> None:
    print(line, flush=True)


def outcome(data: bytes) -> tuple[str, float]:
    t = time.perf_counter()
    try:
        hostile.analyse_bytes(data)
        res = "report"
    except ProfileReadError as e:
        res = "ProfileReadError: " + e.reason[:70]
    except Exception as e:  # noqa: BLE001
        res = f"ESCAPED {type(e).__name__}: {str(e)[:70]}"
    return res, time.perf_counter() - t


# -- 1 ------------------------------------------------------------------------------------------


def hand_made() -> int:
    say("## 1. Hand-made bad files\n")
    say("| kind | bytes | seconds | outcome |\n|---|---:|---:|---|")
    escaped = 0
    for name, make in hostile.KINDS.items():
        data = make()
        res, sec = outcome(data)
        escaped += res.startswith("ESCAPED")
        say(f"| {name} | {len(data):,} | {sec:.2f} | {res.replace('|', '/')} |")
    say(f"\n{len(hostile.KINDS)} kinds, {escaped} escaped exceptions.\n")
    return escaped


# -- 2 ------------------------------------------------------------------------------------------


def seeds() -> list[bytes]:
    from synthetic import scenarios

    out = [hostile.seed_capture(), next(iter(scenarios.multi_gpu_balanced(num_steps=2).encode().values()))]
    out += [p.read_bytes() for p in sorted((REPO / "tests" / "fixtures" / "real").glob("*.xplane.pb"))]
    return out


def fuzz(seconds: float, seed: int, save_dir: Path) -> int:
    say(f"## 2. Mutation fuzz ({seconds:.0f} s, seed {seed})\n")
    resource.setrlimit(resource.RLIMIT_AS, (6 << 30, resource.RLIM_INFINITY))  # a blow-up is a MemoryError here
    rng = random.Random(seed)
    pool = seeds()
    counts: collections.Counter[str] = collections.Counter()
    escapes: dict[str, tuple[int, str]] = {}
    slowest = (0.0, "")
    over_1s = 0
    t_end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < t_end:
        base = rng.choice(pool)
        structured = rng.random() < 0.5  # half well-formed files that reach the analysis
        data = hostile.mutate_structured(rng, base) if structured else hostile.mutate(rng, base, pool)
        counts["structured mutations" if structured else "byte mutations"] += 1
        n += 1
        t = time.perf_counter()
        try:
            hostile.analyse_bytes(data)
            counts["report"] += 1
        except ProfileReadError:
            counts["ProfileReadError"] += 1
        except Exception as e:  # noqa: BLE001
            kind = type(e).__name__
            counts[f"ESCAPED {kind}"] += 1
            where = traceback.extract_tb(e.__traceback__)[-1]
            sig = f"{kind} at {Path(where.filename).name}:{where.lineno}"
            if sig not in escapes:
                save_dir.mkdir(parents=True, exist_ok=True)
                (save_dir / f"escape{len(escapes)}.xplane.pb").write_bytes(data)
                escapes[sig] = (0, f"{e}"[:120])
            escapes[sig] = (escapes[sig][0] + 1, escapes[sig][1])
        dt = time.perf_counter() - t
        over_1s += dt > 1.0
        if dt > slowest[0]:
            slowest = (dt, f"{len(data):,} bytes")
            save_dir.mkdir(parents=True, exist_ok=True)
            (save_dir / "slowest.xplane.pb").write_bytes(data)  # replayed through the server in section 9
    escaped = sum(v for k, v in counts.items() if k.startswith("ESCAPED"))
    for k in ("structured mutations", "byte mutations"):
        say(f"- {k}: {counts.pop(k, 0):,}")
    say(f"- executions: {n:,} ({n / seconds:.0f}/s) from {len(pool)} seed files")
    for k, v in counts.most_common():
        say(f"- {k}: {v:,}")
    say(f"- escaped exceptions: **{escaped}**")
    for sig, (cnt, msg) in escapes.items():
        say(f"  - {cnt} x {sig}: {msg}")
    say(f"- slowest execution: {slowest[0]:.2f} s ({slowest[1]}); executions over 1 s: {over_1s}\n")
    return escaped


# -- 3 ------------------------------------------------------------------------------------------


def regex() -> None:
    from tb_gpu_advisor.frameworks import xla

    say("## 3. HLO suffix regex\n")
    name = ".1" * 40000 + "x"  # 80 kB, no suffix: the old regex retries from every dot
    t = time.perf_counter()
    xla.hlo_op_type(name)
    new = time.perf_counter() - t
    old_re = re.compile(r"(\.\d+)+$")
    short = ".1" * 4000 + "x"  # 8 kB: the old regex is quadratic, so x100 for 80 kB
    t = time.perf_counter()
    old_re.sub("", short)
    old = time.perf_counter() - t
    say(f"- `hlo_op_type` on an 80 kB name: {new * 1e3:.2f} ms (linear scan)")
    say(f"- old regex on an 8 kB name: {old:.2f} s (quadratic: about {old * 100:.0f} s at 80 kB)\n")


# -- 4 ------------------------------------------------------------------------------------------

_MEASURE = r"""
import resource, sys, time
from synthetic import hostile
from tb_gpu_advisor.formats.xplane.reader import ProfileReadError
data = getattr(hostile, sys.argv[1])(int(sys.argv[2]))
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
try:
    hostile.analyse_bytes(data); res = "report"
except ProfileReadError as e:
    res = "ProfileReadError"
print(len(data), time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, res)
"""


def amplification() -> None:
    say("## 4. Amplification\n")
    say("| input | file | seconds | peak RSS of the process | outcome |\n|---|---:|---:|---:|---|")
    for fn, n, label in (("empty_events", 2_500_000, "empty events, 10 MB"),
                         ("empty_events", 12_500_000, "empty events, 50 MB"),
                         ("many_empty_gpu_planes", 100_000, "100k empty GPU planes")):
        out = subprocess.run([sys.executable, "-c", _MEASURE, fn, str(n)], capture_output=True, text=True,
                             cwd=REPO, timeout=600)
        if out.returncode:
            say(f"| {label} | | | | failed: {out.stderr.strip().splitlines()[-1][:80]} |")
            continue
        size, sec, rss, res = out.stdout.split()
        say(f"| {label} | {int(size) / 1e6:.1f} MB | {float(sec):.2f} | {int(rss) / 1e6:.0f} MB | {res} |")
    say()


# -- 5 ------------------------------------------------------------------------------------------


class _Background:
    """A daemon thread running ``_run`` for the duration of a ``with`` block (``_stop`` tells it to end)."""

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        raise NotImplementedError

    def __enter__(self):
        self._t.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._t.join()


class Heartbeat(_Background):
    """A thread ticking every 10 ms; ``max_gap`` is the longest it could not run (a GIL freeze)."""

    def __init__(self) -> None:
        self.max_gap = 0.0
        super().__init__()

    def _run(self) -> None:
        last = time.perf_counter()
        while not self._stop.wait(0.01):
            now = time.perf_counter()
            self.max_gap = max(self.max_gap, now - last - 0.01)
            last = now


def _host(path: str):
    from tb_gpu_advisor.discover.logdir import HostFile

    st = os.stat(path)
    return HostFile(Path(path).name.replace(".xplane.pb", ""), path, st.st_size, st.st_mtime_ns)


def _time_first_report(path: str, isolated: bool, repeat: int = 3) -> float:
    host = _host(path)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        if isolated:
            isolation.call(isolation.analyze_session_json, "run", "s", [host])
        else:
            isolation.analyze_session_json("run", "s", [host])
        times.append(time.perf_counter() - t)
    return sorted(times)[len(times) // 2]


def isolation_checks(tmp: Path, bench_file: str | None) -> None:
    say("## 5. Isolation (one limited child process per analysis)\n")
    small = tmp / "small.xplane.pb"
    small.write_bytes(hostile.seed_capture())
    t = time.perf_counter()
    isolation.call(hostile.busy_loop, 0.0)
    say(f"- first child (starts the forkserver, preloads the analyzer): {time.perf_counter() - t:.2f} s")
    spawn = []
    for _ in range(10):
        t = time.perf_counter()
        isolation.call(isolation.child_noop)
        spawn.append(time.perf_counter() - t)
    say(f"- an empty child afterwards (start, limits, pipe, exit): median {sorted(spawn)[5] * 1e3:.0f} ms, "
        f"max {max(spawn) * 1e3:.0f} ms over 10")
    files = [("small capture", str(small))]
    for pattern in [bench_file] if bench_file else []:
        files += [(f"{Path(p).name}", p) for p in glob.glob(pattern)[:1]]
    say("\n| file | size | in-process | isolated child | overhead |\n|---|---:|---:|---:|---:|")
    for label, path in files:
        a = _time_first_report(path, False, 3 if os.path.getsize(path) < 10e6 else 1)
        b = _time_first_report(path, True, 3 if os.path.getsize(path) < 10e6 else 1)
        say(f"| {label} | {os.path.getsize(path) / 1e6:.1f} MB | {a * 1e3:.0f} ms | {b * 1e3:.0f} ms | "
            f"{(b - a) * 1e3:+.0f} ms |")
    say()
    with Heartbeat() as hb:
        t = time.perf_counter()
        try:
            isolation.call(hostile.busy_loop, 30.0, limits=isolation.Limits(None, 2.0))
            res = "finished?!"
        except isolation.WorkerError as e:
            res = str(e)
    say(f"- a 30 s runaway analysis with a 2 s limit: `{res}` after {time.perf_counter() - t:.1f} s; "
        f"largest stall of a thread in the parent meanwhile: {hb.max_gap * 1e3:.0f} ms")
    with Heartbeat() as hb:
        try:
            isolation.call(hostile.memory_hog, 4096, limits=isolation.Limits(1 << 30, 60))
            res = "finished?!"
        except isolation.WorkerError as e:
            res = str(e)
    say(f"- a child allocating 4 GiB under a 1 GiB limit: `{res}`; parent stall {hb.max_gap * 1e3:.0f} ms")
    data = hostile.huge_hlo_op()
    hlo = tmp / "hlo.xplane.pb"
    hlo.write_bytes(data)
    with Heartbeat() as hb:
        t = time.perf_counter()
        isolation.call(isolation.analyze_session_json, "run", "s", [_host(str(hlo))])
    say(f"- the 80 kB hlo_op file ({len(data) / 1e3:.0f} kB) analysed in a child: "
        f"{time.perf_counter() - t:.2f} s, parent stall {hb.max_gap * 1e3:.0f} ms\n")


# -- 6 ------------------------------------------------------------------------------------------


def _timed(fn):
    t = time.perf_counter()
    try:
        res = fn()
    except Exception as e:  # noqa: BLE001
        res = f"{type(e).__name__}: {e}"
    return res, time.perf_counter() - t


def cache_faults(tmp: Path) -> None:
    import gzip

    from tb_gpu_advisor.discover.logdir import HostFile

    say("## 6. Cache faults\n")
    d = tmp / "cache"
    c = cache_mod.ReportCache(str(d))
    key = cache_mod.make_key("run", "s", [HostFile("h", "/x/h.xplane.pb", 1, 1)])
    path = Path(c.path_for(key))
    rows = []
    os.mkfifo(path)
    res, sec = _timed(lambda: c.get(key))
    rows.append(("FIFO as an entry", res, sec, path.exists()))
    path.symlink_to("/dev/zero")
    res, sec = _timed(lambda: c.get(key))
    rows.append(("entry symlinked to /dev/zero", res, sec, path.exists() or path.is_symlink()))
    header = json.dumps({"format": cache_mod.CACHE_FORMAT, "key": key.material})
    path.write_bytes(gzip.compress(header.encode() + b"\n" + b" " * (300 << 20), compresslevel=9))
    size = path.stat().st_size
    res, sec = _timed(lambda: c.get(key))
    rows.append((f"gzip bomb ({size / 1e3:.0f} kB -> 300 MB)", res, sec, path.exists()))
    say("| fault | get() | seconds | entry left |\n|---|---|---:|---|")
    for name, res, sec, left in rows:
        say(f"| {name} | {res!r} | {sec:.3f} | {left} |")
    failed = {"hosts": [{"host": "h", "error": "h.xplane.pb: file is 9.0 GiB, over the 8.0 GiB limit"}]}
    say(f"\n- a report whose host failed: put() -> {c.put(key, json.dumps(failed))} ({c.last_error})")
    precompute_full(tmp)
    say()


def precompute_full(tmp: Path) -> None:
    """precompute into a cache whose writes fail (a full disk: every write gets ENOSPC)."""
    from tb_gpu_advisor.cli import precompute

    logdir = tmp / "logs9"
    for i in range(9):
        hostile.write_capture(logdir, f"run{i}", hostile.seed_capture())
    real = cache_mod._atomic_write
    calls = [0]

    def full_after_3(path: str, data: bytes) -> None:
        calls[0] += 1
        if calls[0] > 3:
            raise OSError(28, "No space left on device")
        real(path, data)

    cache_mod._atomic_write = full_after_3
    try:
        out = io.StringIO()
        s = precompute.precompute(str(logdir), jobs=1, cache=cache_mod.ReportCache(str(tmp / "full")), out=out)
    finally:
        cache_mod._atomic_write = real
    say(f"- precompute of 9 sessions into a cache that fills after 3: {s.count('new')} new, "
        f"{s.count('failed')} failed, exit {s.exit_code}")


# -- 7, 8 ---------------------------------------------------------------------------------------


def _client(logdir: str, cache_dir: str | None, **kw):
    """A factory of clients of TensorBoard's WSGI app with the real plugin, and its ReportService."""
    from werkzeug import test as wt
    from werkzeug import wrappers

    app, service = hostile.plugin_app(logdir, cache_dir, **kw)
    return (lambda: wt.Client(app, wrappers.Response)), service


def partial_copy(tmp: Path, bench_file: str | None) -> None:
    say("## 7. A capture copied in while the tab polls\n")
    src = next(iter(glob.glob(bench_file)), None) if bench_file else None
    data = Path(src).read_bytes() if src else hostile.seed_capture() * 1  # small fallback
    if not src:
        from synthetic import scenarios

        data = next(iter(scenarios.ideal(num_steps=400).encode().values()))
    logdir, cache_dir = tmp / "copylogs", tmp / "copycache"
    dest = logdir / "run" / "plugins" / "profile" / SESSION / "host.xplane.pb"
    dest.parent.mkdir(parents=True)
    make, service = _client(str(logdir), str(cache_dir))
    client = make()
    url = f"/data/plugin/gpu_advisor/report?run=run&session={SESSION}"
    chunks, copy_s = 16, 8.0
    step = -(-len(data) // chunks)
    codes: collections.Counter[int] = collections.Counter()
    with open(dest, "wb") as f:
        for i in range(chunks):
            f.write(data[i * step:(i + 1) * step])
            f.flush()
            for _ in range(2):
                codes[client.get(url).status_code] += 1
                time.sleep(copy_s / chunks / 2)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        r = client.get(url)
        codes[r.status_code] += 1
        if r.status_code != 202:
            break
        time.sleep(0.4)
    entries = len(list(cache_dir.glob("*.json.gz")))
    say(f"- {len(data) / 1e6:.1f} MB copied in {chunks} chunks over {copy_s:.0f} s, polled every "
        f"{copy_s / chunks / 2:.2f} s: final status {r.status_code}, responses {dict(codes)}, "
        f"**{service.computations} analysis, {entries} cache entry**\n")


def still_holds(tmp: Path) -> None:
    say("## 8. What must keep holding\n")
    logdir = tmp / "holdlogs"
    secret = tmp / "SECRET.xplane.pb"
    secret.write_bytes(b"TOP-SECRET-" * 10)
    hostile.write_capture(logdir, "run", hostile.seed_capture())
    make, service = _client(str(logdir), None)
    base = "/data/plugin/gpu_advisor"
    evil = ["..", "../..", "/", "/etc/passwd", str(secret), "../SECRET", "..%2f..%2fSECRET", "%00", "\x00",
            "run/../..", "run/plugins/profile/../../..", "./", "~", "C:\\Windows", "run\\..\\..", "file:///etc/passwd",
            "s3://bucket/x", "<script>", "*", "?"]
    urls = []
    for e in evil:
        urls += [f"{base}/report?run={e}&session={SESSION}", f"{base}/report?run=run&session={e}",
                 f"{base}/report?run=run&session={SESSION}&host={e}", f"{base}/report.md?run={e}&session={e}",
                 f"{base}/static/{e}", f"{base}/static/../{e}"]
    urls += [f"{base}/static/../../../../etc/passwd", f"{base}/static/%2e%2e/%2e%2e/etc/passwd",
             f"{base}/index.js/../../plugin.py"]
    client = make()
    bad = 0
    for u in urls:
        r = client.get(u)
        body = r.get_data()
        if b"TOP-SECRET" in body or b"root:" in body or (r.status_code == 200 and "/static/" in u):
            bad += 1
    say(f"- {len(urls)} hostile requests: {bad} read outside the logdir (or served a non-asset)")
    url = f"{base}/report?run=run&session={SESSION}"
    results: list[int] = []

    def poll(_):
        c = make()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            r = c.get(url)
            if r.status_code != 202:
                return r.status_code
            time.sleep(0.05)
        return 0

    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(50) as pool:
        results = list(pool.map(poll, range(50)))
    errors = sum(1 for code in results if code != 200)
    say(f"- 50 concurrent clients: {errors} errors, {service.computations} analysis\n")


class RunsProbe(_Background):
    """A thread asking the plugin's cheap ``/runs`` every 20 ms; ``worst`` is its slowest answer (seconds)."""

    def __init__(self, client_factory) -> None:
        self.worst, self.count = 0.0, 0
        self._client = client_factory()
        super().__init__()

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            t = time.perf_counter()
            ok = self._client.get("/data/plugin/gpu_advisor/runs").status_code == 200
            self.worst = max(self.worst, time.perf_counter() - t if ok else float("inf"))
            self.count += 1


def _hostile_inputs(fuzz_dir: Path) -> list[tuple[str, bytes]]:
    """Every hand-made bad file, the fuzz escapes/slowest inputs saved in ``fuzz_dir``, and the 80 kB hlo_op."""
    out = [(name, make()) for name, make in hostile.KINDS.items()]
    out += [(p.name, p.read_bytes()) for p in sorted(fuzz_dir.glob("*.xplane.pb"))]
    return out


def server_hold(tmp: Path, fuzz_dir: Path) -> None:
    """Each hostile file analysed by the real plugin (limited child) while /runs is polled: the worst hold."""
    say("## 9. How long a hostile input holds TensorBoard\n")
    inputs = _hostile_inputs(fuzz_dir)
    logdir = tmp / "holdserver"
    for i, (name, data) in enumerate(inputs):
        hostile.write_capture(logdir, f"r{i:03d}", data)
    make, service = _client(str(logdir), None)
    client = make()
    codes: collections.Counter[int] = collections.Counter()
    slowest = (0.0, "")
    with RunsProbe(make) as probe:
        for i, (name, _) in enumerate(inputs):
            t = time.perf_counter()
            r = client.get(f"/data/plugin/gpu_advisor/report?run=r{i:03d}&session={SESSION}")
            while r.status_code == 202:
                time.sleep(0.05)
                r = client.get(f"/data/plugin/gpu_advisor/report?run=r{i:03d}&session={SESSION}")
            codes[r.status_code] += 1
            slowest = max(slowest, (time.perf_counter() - t, name))
    say(f"- {len(inputs)} hostile files ({len(hostile.KINDS)} hand-made, {len(inputs) - len(hostile.KINDS)} "
        f"saved by the fuzzer) through the plugin, one limited child each: responses {dict(codes)}, "
        f"{service.computations} analyses; slowest report {slowest[0]:.2f} s ({slowest[1]})")
    say(f"- meanwhile {probe.count} `/runs` requests: worst latency **{probe.worst * 1e3:.0f} ms** "
        f"(target: under 1 s)\n")


# -- 10 -----------------------------------------------------------------------------------------


def _kineto_outcome(tmp: Path, name: str, data: bytes) -> tuple[str, float, float]:
    """(outcome class, seconds, peak MB traced) of one trace through the real chain (formats.read -> report)."""
    import tracemalloc

    from tb_gpu_advisor.model.logdir import HostFile
    from tb_gpu_advisor.runtime.pipeline import analyze_session

    path = tmp / f"{name}.1700000000000.pt.trace.json"
    path.write_bytes(data)
    t = time.perf_counter()
    tracemalloc.start()
    try:
        rep = analyze_session("run", "s", [HostFile(host=name, path=str(path), size=len(data), mtime_ns=0,
                                                    format="kineto")])
        host = rep.hosts[0]
        res = ("error" if host.error else "damaged" if host.damage else "healthy" if rep.healthy else "report")
    except Exception as e:  # noqa: BLE001
        res = f"ESCAPED {type(e).__name__}: {str(e)[:60]}"
    finally:
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        path.unlink()
    return res, time.perf_counter() - t, peak


def kineto_hostile(tmp: Path) -> int:
    from synthetic import hostile_kineto as hk

    say("## 10. PyTorch traces: one long event, times no clock writes\n")
    say("| kind | bytes | seconds | peak MB (traced) | outcome |\n|---|---:|---:|---:|---|")
    escaped, classes = 0, collections.Counter()
    for name, make in hk.KINDS.items():
        data = make()
        res, sec, peak = _kineto_outcome(tmp, name, data)
        escaped += res.startswith("ESCAPED")
        classes[res.split(":")[0]] += 1
        say(f"| {name} | {len(data):,} | {sec:.2f} | {peak:.0f} | {res} |")
    say("\nOutcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(classes.items()))
        + " (every time kind must be damaged or an error; none healthy).\n")
    say("| long part | MB | seconds | s per MB | peak MB / MB |\n|---|---:|---:|---:|---:|")
    for kind, make in (("name", lambda n: hk.long_event("name", n)), ("space", lambda n: hk.long_event("space", n)),
                       ("args", lambda n: hk.long_event("args", n)), ("gap", hk.long_gap)):
        for mb in (8, 32, 128):
            res, sec, peak = _kineto_outcome(tmp, f"{kind}{mb}", make(mb << 20))
            escaped += res.startswith("ESCAPED")
            say(f"| {kind} | {mb} | {sec:.2f} | {sec / mb:.3f} | {peak / mb:.1f} |")
    say()
    return escaped


# -- 12 -----------------------------------------------------------------------------------------


def pickle_campaign(tmp: Path, seconds: float = 10.0, memory_mb: int = 1024) -> int:
    """Every hostile snapshot pickle through the reader and the analysis, in a forked child limited to ``seconds``
    and ``memory_mb`` more address space; one row each, then per defect class how each ended.  Returns the number
    that ended in anything but a refusal or a damaged report (a timeout, a signal, an exception, "healthy")."""
    from synthetic import hostile_pickles as hp

    say("## 12. Snapshot pickles\n")
    say("| file | class | bytes | seconds | peak RSS MB | outcome |\n|---|---|---:|---:|---:|---|")
    by_class: dict[str, collections.Counter[str]] = {c: collections.Counter() for c in hp.CLASSES}
    worst = 0.0
    for name, (cls, make) in hp.PICKLES.items():
        data = make()
        got = hp.run_bounded(data, str(tmp / f"{name}.pickle"), seconds=seconds, memory_mb=memory_mb)
        by_class[cls][got["outcome"]] += 1
        worst = max(worst, got["seconds"])
        rss = f"{got['peak_rss_mb']:.0f}" if got["peak_rss_mb"] else "-"
        msg = got["message"].split(": ", 2)[-1].replace("|", "/")[:110]
        say(f"| {name} | {cls} | {len(data):,} | {got['seconds']:.2f} | {rss} | {got['outcome']}: {msg} |")
    say("\n| defect class | files | refused | damaged report | anything else |\n|---|---:|---:|---:|---:|")
    bad = 0
    for cls, counts in by_class.items():
        other = sum(v for k, v in counts.items() if k not in ("error", "damaged"))
        bad += other
        say(f"| {cls} | {sum(counts.values())} | {counts['error']} | {counts['damaged']} | {other} |")
    say(f"\n{len(hp.PICKLES)} pickles, slowest {worst:.2f} s, {bad} not refused.\n")
    return bad


def inputs_campaign(tmp: Path, seconds: float = 20.0, memory_mb: int = 1024) -> int:
    """Every kind of ``synthetic.hostile_inputs`` through ``report`` in a limited child; one row each.  Returns the
    number that ended outside their allowed outcomes or without their words (a traceback, a hang, "healthy")."""
    from synthetic import hostile_inputs as hi
    from synthetic import hostile_pickles as hp

    say("## 13. The new inputs: viewer pages, snapshot values, LFS pointers, memory timelines\n")
    say("| kind | input | bytes | seconds | peak RSS MB | outcome |\n|---|---|---:|---:|---:|---|")
    bad = 0
    for name, (inp, file_name, make, outcomes, words) in hi.KINDS.items():
        data = make()
        (tmp / name).mkdir(exist_ok=True)
        got = hi.run_bounded(data, str(tmp / name / file_name), seconds=seconds, memory_mb=memory_mb)
        ok = got["outcome"] in outcomes and any(w in got["message"] for w in words)
        bad += not ok
        rss = f"{got['peak_rss_mb']:.0f}" if got["peak_rss_mb"] else "-"
        msg = got["message"].split(": ", 3)[-1].replace("|", "/")[:110]
        say(f"| {name} | {inp} | {len(data):,} | {got['seconds']:.2f} | {rss} | {got['outcome']}: {msg} |"
            + ("" if ok else " **unexpected**"))
    say("\n| page (a snapshot with a string beside it) | MB | seconds | peak RSS MB | outcome |\n|---|---:|---:|---:|---|")
    for mb in (16, 64):
        data = hi.page(hi.padded_snapshot(mb << 20))
        got = hp.run_bounded(data, str(tmp / f"page{mb}.html"), seconds=120, memory_mb=8 * (len(data) >> 20) + 512)
        bad += got["outcome"] not in ("report", "damaged")
        say(f"| page | {len(data) / 2**20:.0f} | {got['seconds']:.2f} | {got['peak_rss_mb'] or 0:.0f} | "
            f"{got['outcome']} |")
    counts, escaped = hi.fuzz_values(500, 13, str(tmp / "fuzzed.pickle"), edits=8)
    say(f"\nSnapshot values fuzzed (``hostile_inputs.mutate_values``, 500 of the scenarios, seed 13): {counts}"
        + "".join(f"\n- escaped: {e}" for e in escaped[:10]))
    bad += len(escaped)
    say(f"\n{len(hi.KINDS)} kinds, {bad} unexpected.\n")
    return bad


def main() -> int:
    import logging

    logging.basicConfig(level=logging.ERROR)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fuzz-seconds", type=float, default=60.0)
    ap.add_argument("--fuzz-minutes", type=float, default=None, help="overrides --fuzz-seconds")
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--bench-file", default=None, help="a big capture (glob) for the isolation and copy checks")
    ap.add_argument("--only", default=None, help="comma-separated section numbers")
    args = ap.parse_args()
    only = set(args.only.split(",")) if args.only else None
    if args.fuzz_minutes is not None:
        args.fuzz_seconds = args.fuzz_minutes * 60
    tmp = Path(tempfile.mkdtemp(prefix="tbga-robust-"))
    say(f"# Robustness ({time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores, Python {sys.version.split()[0]})\n")
    escaped = 0
    try:
        sections = [("1", lambda: hand_made()), ("3", regex), ("4", amplification),
                    ("5", lambda: isolation_checks(tmp, args.bench_file)), ("6", lambda: cache_faults(tmp)),
                    ("7", lambda: partial_copy(tmp, args.bench_file)), ("8", lambda: still_holds(tmp)),
                    ("2", lambda: fuzz(args.fuzz_seconds, args.seed, REPO / ".robustness")),
                    ("9", lambda: server_hold(tmp, REPO / ".robustness")), ("10", lambda: kineto_hostile(tmp)),
                    ("11", lambda: robustness_sqlite.campaign(tmp)), ("12", lambda: pickle_campaign(tmp)),
                    ("13", lambda: inputs_campaign(tmp))]
        for number, fn in sections:
            if only is None or number in only:
                escaped += fn() or 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    say(f"**Escaped exceptions in total: {escaped}**")
    return 1 if escaped else 0


if __name__ == "__main__":
    sys.exit(main())
