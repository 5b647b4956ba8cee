"""Latency of the tab under many clients: the real plugin in TensorBoard's WSGI app, served over loopback HTTP by
werkzeug's threaded server (as ``tensorboard`` serves it) in a child process, and ``--clients`` client threads here,
each asking the routes a page open asks -- ``/runs``, a ready ``/report``, ``/index.js`` -- ``--rounds`` times.

Not a test: prints p50 / p95 / max per route and over all, in milliseconds, and exits.  Bounded: every request
has a 30 s timeout and the run stops after ``--seconds``.  Issue #39's figure: p95 at most 0.5 s with 50 clients.

    python benchmarks/loopback_load.py [--logdir DIR] [--clients 50] [--rounds 10]
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import sys
import threading
import time
from collections import defaultdict
from urllib.parse import urlencode

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PREFIX = "/data/plugin/gpu_advisor"
DEFAULT_LOGDIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "demo_logs")


def serve(logdir: str, port_out, cache_dir: str) -> None:
    """In the child: TensorBoard's WSGI app with the real plugin, on a free loopback port (written to ``port_out``)."""
    import logging

    from werkzeug.serving import make_server

    from synthetic import hostile

    logging.basicConfig(level=logging.ERROR)
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no access log line per request
    app, _ = hostile.plugin_app(logdir, cache_dir)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    port_out.send(server.server_port)
    server.serve_forever()


def fetch(port: str, path: str) -> tuple[int, float, bytes]:
    """One GET on a new connection: (status, seconds, body)."""
    t = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", int(port), timeout=30)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        body = r.read()
        return r.status, time.perf_counter() - t, body
    finally:
        conn.close()


def warm_listing(port: int, tries: int = 20) -> list:
    """``/runs``' runs, asked until every session's ``has_gpu`` probe is done (each answer probes files for at most
    ``formats.probe.DEFAULT_BUDGET_S``; a TensorBoard does this once, at its first page opens)."""
    runs: list = []
    for _ in range(tries):
        _, _, body = fetch(port, f"{PREFIX}/runs")
        runs = json.loads(body)["runs"]
        if all(s.get("has_gpu") is not None for r in runs for s in r["sessions"]):
            break
    return runs


def ready_report(port: int, run: str, session: str, deadline: float) -> str:
    """The /report URL of ``run``/``session``, polled until it is ready (so the load measures serving, not analysis)."""
    url = f"{PREFIX}/report?{urlencode({'run': run, 'session': session})}"
    while time.monotonic() < deadline:
        status, _, body = fetch(port, url)
        if status == 200:
            return url
        if status != 202:
            raise SystemExit(f"{url}: {status} {body[:300]!r}")
        time.sleep(0.2)
    raise SystemExit(f"{url} never became ready")


def percentile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))] if xs else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--logdir", default=DEFAULT_LOGDIR)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=10, help="page opens per client")
    ap.add_argument("--seconds", type=float, default=300.0, help="stop after this long, whatever is left")
    ap.add_argument("--json", action="store_true", help="print one JSON line instead of a table")
    args = ap.parse_args()
    import tempfile

    ctx = multiprocessing.get_context("spawn")
    recv, send = ctx.Pipe(duplex=False)
    cache_dir = tempfile.mkdtemp(prefix="tbga-load-")
    # not a daemon: the server starts the analysis' worker processes
    server = ctx.Process(target=serve, args=(args.logdir, send, cache_dir))
    server.start()
    try:
        if not recv.poll(60):
            raise SystemExit("the server did not start")
        port = recv.recv()
        deadline = time.monotonic() + args.seconds
        runs = warm_listing(port)
        first = runs[0]["sessions"][0]
        report = ready_report(port, runs[0]["run"], first["session"], deadline)
        routes = {"/runs": f"{PREFIX}/runs", "/report": report, "/index.js": f"{PREFIX}/index.js"}
        times: dict[str, list[float]] = defaultdict(list)
        errors: dict[str, int] = defaultdict(int)
        lock = threading.Lock()
        start = threading.Barrier(args.clients)

        def client() -> None:
            start.wait()
            for _ in range(args.rounds):
                for name, url in routes.items():
                    if time.monotonic() > deadline:
                        return
                    try:
                        status, seconds, _ = fetch(port, url)
                    except OSError:
                        status, seconds = 0, float("inf")
                    with lock:
                        times[name].append(seconds)
                        if status != 200:
                            errors[name] += 1

        threads = [threading.Thread(target=client) for _ in range(args.clients)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
    finally:
        server.kill()
        server.join(5)
    everything = [x for xs in times.values() for x in xs]
    rows = {name: {"n": len(xs), "p50_ms": percentile(xs, 0.5) * 1e3, "p95_ms": percentile(xs, 0.95) * 1e3,
                   "max_ms": max(xs) * 1e3, "errors": errors[name]} for name, xs in {**times, "all": everything}.items()}
    if args.json:
        print(json.dumps({"clients": args.clients, "rounds": args.rounds, "wall_s": wall, "routes": rows}))
        return 0
    print(f"{args.clients} clients x {args.rounds} page opens on {args.logdir}: {len(everything)} requests "
          f"in {wall:.1f} s")
    for name, r in rows.items():
        print(f"  {name:10s} n={r['n']:5d}  p50 {r['p50_ms']:7.1f} ms  p95 {r['p95_ms']:7.1f} ms  "
              f"max {r['max_ms']:7.1f} ms  errors {r['errors']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
