"""The CLI's fixed cost (issue #30 item 3): what a user waits for before any work, against the bare interpreter.

Each command runs ``--repeat`` times in a fresh interpreter, interleaved with ``python -c pass`` (so a load spike on
a shared machine hits both), and the table prints the median and minimum wall time of each, the median above the
bare interpreter, the median CPU seconds (user + system; less sensitive to other processes on a shared machine than
wall time) with the same difference, and the import time ``python -X importtime`` gives for the package (its top-level modules' cumulative
microseconds, one extra run).  Report caching is off (``TB_GPU_ADVISOR_CACHE_DIR=off``), so ``report`` analyses.

    python benchmarks/cli_startup.py                  # --help, report --help, report of a small PyTorch trace
    python benchmarks/cli_startup.py --repeat 15 --file tests/fixtures/wild/amd_mi250
    git worktree add --detach /tmp/base main && python benchmarks/cli_startup.py --baseline /tmp/base  # before/after,
                                                                          # interleaved in one run

Each checkout's package is byte-compiled first (``compileall``, as ``pip install`` does): where
``PYTHONDONTWRITEBYTECODE`` is set and no ``__pycache__`` was written, every run would otherwise compile ~130 modules
from source (~0.5 s of CPU, a cost no installed package pays); ``--no-compile`` measures that case.

Nothing is asserted: timings on a loaded machine vary; the table says what was measured.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_FILE = os.path.join(REPO, "tests", "fixtures", "wild", "amd_mi250")


def commands(logdir: str, repo: str = REPO, tag: str = "") -> list[tuple[str, str, list[str]]]:
    """(row name, checkout it runs in, argv)."""
    cli = [sys.executable, "-m", "tb_gpu_advisor.cli"]
    rows = [
        ("import tb_gpu_advisor", [sys.executable, "-c", "import tb_gpu_advisor"]),
        ("cli --help", cli + ["--help"]),
        ("cli report --help", cli + ["report", "--help"]),
        (f"cli report {os.path.relpath(logdir, REPO)}", cli + ["report", logdir]),
    ]
    return [(f"{name}{tag}", repo, argv) for name, argv in rows]


def _env(repo: str) -> dict[str, str]:
    env = dict(os.environ, TB_GPU_ADVISOR_CACHE_DIR="off")
    env["PYTHONPATH"] = repo + os.pathsep + env.get("PYTHONPATH", "")
    return env


def wall(repo: str, argv: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system of the child) of one run."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(argv, cwd=repo, env=_env(repo), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    t1 = time.perf_counter()
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return t1 - t0, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def import_ms(repo: str, argv: list[str]) -> tuple[float, int]:
    """(cumulative import time of the top-level imports in ms, modules of the package imported)."""
    r = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], cwd=repo, env=_env(repo), stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, check=False)
    total, ours = 0, 0
    for line in r.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if not m:
            continue
        depth = len(m.group(3)) // 2
        if m.group(4).startswith("tb_gpu_advisor"):
            ours += 1
        if depth == 0 and m.group(4) != "encodings":  # top-level imports: the cumulative cost of everything
            total += int(m.group(2))
    return total / 1000, ours


def load() -> str:
    try:
        one, five, _ = os.getloadavg()
        return f"load average {one:.2f} / {five:.2f} (1 / 5 min) on {os.cpu_count()} cores"
    except OSError:
        return "load average unknown"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--file", default=DEFAULT_FILE, help="logdir (or file) for `report` (default: %(default)s)")
    ap.add_argument("--baseline", default=None, metavar="CHECKOUT",
                    help="another checkout (e.g. a worktree of main): its rows run interleaved with this one's")
    ap.add_argument("--no-compile", action="store_true",
                    help="do not byte-compile the checkouts first (measures compiling from source where no .pyc is)")
    args = ap.parse_args(argv)
    logdir = os.path.abspath(args.file)
    if not args.no_compile:
        for repo in filter(None, (REPO, args.baseline)):
            subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(repo, "tb_gpu_advisor")], check=True)
    cmds = [("python -c pass", REPO, [sys.executable, "-c", "pass"])]
    if args.baseline:
        cmds += commands(logdir, os.path.abspath(args.baseline), " (baseline)")
    cmds += commands(logdir)
    print(f"# {platform.node()}: {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
          f"{load()} before; {'no byte-compiling' if args.no_compile else 'package byte-compiled first'}")
    times: dict[str, list[float]] = {name: [] for name, _, _ in cmds}
    cpus: dict[str, list[float]] = {name: [] for name, _, _ in cmds}
    for _ in range(args.repeat):
        for name, repo, cmd in cmds:  # interleaved: a load spike hits every command of that round
            w, c = wall(repo, cmd)
            times[name].append(w)
            cpus[name].append(c)
    base = statistics.median(times[cmds[0][0]])
    base_cpu = statistics.median(cpus[cmds[0][0]])
    print(f"# {load()} after; {args.repeat} runs each, interleaved")
    print(f"| {'command':<56} | median s | min s | median above `pass` s | CPU s | CPU above `pass` s "
          "| imports ms | package modules |")
    print(f"|{'-' * 58}|---------:|------:|----------------------:|------:|-------------------:|-----------:|"
          "----------------:|")
    for name, repo, cmd in cmds:
        med, lo = statistics.median(times[name]), min(times[name])
        cpu = statistics.median(cpus[name])
        ms, mods = import_ms(repo, cmd)
        print(f"| {name:<56} | {med:8.3f} | {lo:5.3f} | {med - base:21.3f} | {cpu:5.2f} | {cpu - base_cpu:18.2f} "
              f"| {ms:10.0f} | {mods:15d} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
