"""Time discovery, the plugin's /runs route and is_active() on a logdir with many runs (default 10,000).

Not a test: prints timings.  Each run gets an event file and, like real
training logdirs, other plugins' asset folders; every ``--every``-th run
gets a two-host profile session.  ``--no-profiles`` measures the worst case
of has_profiles() (it must list everything to answer False).

    python benchmarks/large_logdir.py [--runs 10000] [--every 2000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tb_gpu_advisor.discover.logdir import discover, has_profiles  # noqa: E402
from tests.support.profile_files import write_events_file, write_profile  # noqa: E402


def build(root: str, runs: int, every: int) -> int:
    """Create the logdir; return the number of profile sessions written."""
    sessions = 0
    for i in range(runs):
        run_dir = os.path.join(root, f"exp{i // 100:03d}", f"run{i:05d}")
        write_events_file(run_dir)
        for plugin in ("hparams", "text"):
            os.makedirs(os.path.join(run_dir, "plugins", plugin), exist_ok=True)
            open(os.path.join(run_dir, "plugins", plugin, "data.pb"), "wb").close()
        if every and i % every == every - 1:
            rel = os.path.relpath(run_dir, root)
            for host in ("worker0", "worker1"):
                write_profile(root, rel, "2025_01_01_00_00_00", host)
            sessions += 1
    return sessions


def timed(fn, *args, repeat: int = 3) -> tuple[float, object]:
    """Best of ``repeat`` wall times (seconds) and the last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn(*args)
        best = min(best, time.perf_counter() - t0)
    return best, result


def time_plugin(root: str) -> tuple[float, float, int]:
    """Best-of-3 time of the real /runs route, and the first is_active() call, on a fresh plugin."""
    import argparse as _argparse
    import json

    from tensorboard.backend import application
    from tensorboard.plugins import base_plugin
    from werkzeug import test as werkzeug_test
    from werkzeug import wrappers

    from tb_gpu_advisor.serve.plugin import GpuAdvisorPlugin

    flags = _argparse.Namespace(gpu_advisor_cache_dir="off", gpu_advisor_discovery_ttl=None)
    plugin = GpuAdvisorPlugin(base_plugin.TBContext(logdir=root, flags=flags))
    t0 = time.perf_counter()
    plugin.is_active()
    active_s = time.perf_counter() - t0
    client = werkzeug_test.Client(application.TensorBoardWSGI([plugin]), wrappers.Response)
    route_s, resp = timed(client.get, "/data/plugin/gpu_advisor/runs")
    return route_s, active_s, len(json.loads(resp.get_data())["runs"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10_000)
    ap.add_argument("--every", type=int, default=2_000, help="one profiled run per this many runs")
    ap.add_argument("--no-profiles", action="store_true", help="no profiles at all (has_profiles worst case)")
    ap.add_argument("--keep", help="build in this folder and keep it")
    args = ap.parse_args()
    root = args.keep or tempfile.mkdtemp(prefix="tbga_large_")
    try:
        t0 = time.perf_counter()
        n = build(root, args.runs, 0 if args.no_profiles else args.every)
        print(f"built {args.runs} runs, {n} profile sessions in {time.perf_counter() - t0:.1f}s at {root}")
        t, sessions = timed(discover, root)
        print(f"discover():     {t * 1000:8.1f} ms  ({len(sessions)} sessions)")
        t, found = timed(has_profiles, root)
        print(f"has_profiles(): {t * 1000:8.1f} ms  ({found})")
        route_s, active_s, n_runs = time_plugin(root)
        print(f"GET /runs:      {route_s * 1000:8.1f} ms  ({n_runs} runs listed; werkzeug client around TensorBoardWSGI)")
        print(f"is_active():    {active_s * 1000:8.1f} ms  (first call; later calls reuse a positive answer)")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
