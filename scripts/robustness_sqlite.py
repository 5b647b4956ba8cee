"""The SQLite campaign of ``scripts/robustness.py`` (section 11, issue #39): hostile Nsight exports, one fresh CLI
process each, and the swap race.

    python scripts/robustness.py --only 11                       # every hostile kind, 40 fuzzed files, 20,000 opens
    python scripts/robustness_sqlite.py --fuzz 200 --opens 100000 # alone, longer

Each file is given to ``tb-gpu-advisor report FILE`` (report cache off) in its own process, with a
wall-clock limit and a memory cap (peak RSS polled; the process is killed above it).  The outcome of each is one of:
a report (exit 0), a clear error (exit 1 or 2 with one line), a timeout, a memory runaway, or a crash (any other exit,
a signal, a traceback).  The summary names a count per defect class -- views, triggers, recursive CTE views, virtual
tables, computed columns, names that are no UTF-8, huge rows, truncation, fuzzed bytes -- and the swap race counts
outside reads per 20,000 opens with and without ``--follow-symlinks``.
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from synthetic import hostile  # noqa: E402

#: Defect class of each hand-made kind.
CLASSES = {
    "endless_env_view": "recursive CTE view (metadata)",
    "endless_kernel_view": "recursive CTE view (kernels)",
    "endless_strings_view": "recursive CTE view (strings)",
    "trigger": "trigger",
    "virtual_kernels": "virtual table",
    "generated_names": "computed column",
    "not_utf8_table_name": "name not UTF-8",
    "not_utf8_in_minimal": "name not UTF-8",
    "malformed_schema_not_utf8": "name not UTF-8",
    "huge_env_value": "huge row",
    "truncated": "truncation",
}


def say(line: str = "") -> None:
    print(line, flush=True)


def run_cli(args: list[str], timeout_s: float, cap_mb: int) -> tuple[str, float, float, str]:
    """(outcome, seconds, peak RSS MB, last line of its stderr) of ``report *args`` in a fresh process."""
    env = {**os.environ, "TB_GPU_ADVISOR_CACHE_DIR": "off", "PYTHONPATH": str(REPO)}
    t = time.monotonic()
    with tempfile.TemporaryFile() as out:
        p = subprocess.Popen([sys.executable, "-m", "tb_gpu_advisor.cli", "report", *args, "--format", "text"],
                             stdout=subprocess.DEVNULL, stderr=out, env=env)
        peak, killed = 0, ""
        while p.poll() is None:
            try:
                with open(f"/proc/{p.pid}/status") as f:
                    peak = max([peak] + [int(x.split()[1]) for x in f if x.startswith("VmHWM")])
            except OSError:
                pass
            if time.monotonic() - t > timeout_s:
                killed = "timeout"
            elif peak > cap_mb * 1024:
                killed = "memory runaway"
            if killed:
                p.kill()
                p.wait()
                break
            time.sleep(0.05)
        out.seek(0)
        err = out.read().decode("utf-8", "replace")
    seconds = time.monotonic() - t
    lines = [x for x in err.splitlines() if x.strip()]
    if killed:
        what = killed
    elif p.returncode == 0:
        what = "report"
    elif p.returncode in (1, 2) and "Traceback" not in err:
        what = "clear error"
    else:
        what = f"crash (exit {p.returncode})"
    return what, seconds, peak / 1024, (lines[-1] if lines else "")[:160]


def fuzzed(seed_file: str, rng: random.Random, out: str) -> str:
    """A copy of ``seed_file`` with a few bytes, a page, or the tail changed."""
    data = bytearray(Path(seed_file).read_bytes())
    how = rng.choice(["flip", "flip", "page", "cut"])
    if how == "flip":
        for _ in range(rng.randint(1, 16)):
            data[rng.randrange(len(data))] = rng.randrange(256)
    elif how == "page":
        page = int.from_bytes(data[16:18], "big") or 65536
        k = rng.randrange(len(data) // page)
        data[k * page:(k + 1) * page] = bytes(rng.randrange(256) for _ in range(page))
    else:
        del data[rng.randrange(100, len(data)):]
    Path(out).write_bytes(bytes(data))
    return out


def files_campaign(tmp: Path, fuzz: int, seed: int, timeout_s: float, cap_mb: int) -> tuple[int, dict]:
    """Every hand-made kind and ``fuzz`` fuzzed exports through the CLI, each alone in its run folder; then all of
    them beside a good run in one logdir, and ``report --run good`` on it.  (bad outcomes, per-class counts)."""
    say("### Hostile exports, one CLI process each\n")
    say(f"Limits: {timeout_s:.0f} s, {cap_mb} MB peak RSS.\n")
    say("| file | class | outcome | s | peak MB | last line |")
    say("|---|---|---|---:|---:|---|")
    per_class: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    bad = 0
    logdir = tmp / "logdir"
    jobs = []
    for kind, make in hostile.SQLITE_KINDS.items():
        (logdir / kind).mkdir(parents=True)
        jobs.append((kind, CLASSES.get(kind, kind), make(str(logdir / kind / "report.sqlite"))))
    base = hostile.sqlite_export(str(tmp / "seed.sqlite"), steps=8)
    rng = random.Random(seed)
    for i in range(fuzz):
        (logdir / f"fuzz{i:03d}").mkdir()
        jobs.append((f"fuzz{i:03d}", "fuzzed bytes", fuzzed(base, rng, str(logdir / f"fuzz{i:03d}" / "report.sqlite"))))
    worst = collections.defaultdict(lambda: (0.0, 0.0))
    for name, cls, path in jobs:
        what, s, mb, last = run_cli([path], timeout_s, cap_mb)
        per_class[cls][what] += 1
        worst[cls] = (max(worst[cls][0], s), max(worst[cls][1], mb))
        if what not in ("report", "clear error"):
            bad += 1
        if not name.startswith("fuzz") or what not in ("report", "clear error"):
            say(f"| {name} | {cls} | {what} | {s:.1f} | {mb:.0f} | {last.replace('|', '/')} |")
    (logdir / "good").mkdir()
    hostile.sqlite_export(str(logdir / "good" / "train.sqlite"), steps=8)
    what, s, mb, last = run_cli([str(logdir), "--run", "good"], timeout_s, cap_mb)
    cls = "a good run beside all of them"
    per_class[cls][what] += 1
    worst[cls] = (s, mb)
    bad += what != "report"
    say(f"| `report LOGDIR --run good` | {cls} | {what} | {s:.1f} | {mb:.0f} | {last.replace('|', '/')} |")
    say("")
    return bad, {cls: (dict(c), worst[cls]) for cls, c in per_class.items()}


def swap_race(tmp: Path, opens: int) -> dict[str, dict[str, int]]:
    """The swap race of ``tests/formats/test_nsys_swap_race.py`` at ``opens`` opens per setting."""
    import importlib.util
    import sqlite3

    spec = importlib.util.spec_from_file_location("swap_race", REPO / "tests" / "formats" / "test_nsys_swap_race.py")
    race_mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(race_mod)
    from tb_gpu_advisor.common import fsio

    out = {}
    for follow in (False, True):
        d = Path(tempfile.mkdtemp(dir=tmp))
        root = d / "logdir"
        run = root / "run"
        (run / "data").mkdir(parents=True)
        outside = str(d / "outside.sqlite")
        race_mod._marked(outside, "outside_marker")
        swapped = str(run / "data" / "real.sqlite") if follow else str(run / "report.sqlite")
        race_mod._marked(swapped, "inside_marker")
        if follow:
            os.symlink(os.path.join("data", "real.sqlite"), run / "report.sqlite")
        st = os.stat(swapped)
        listed = fsio.Listed(str(run / "report.sqlite"), str(root), ("run", "report.sqlite"), (st.st_dev, st.st_ino),
                             follow)
        try:
            out["follow-symlinks" if follow else "default"] = race_mod.race(str(root), listed, swapped, outside, opens)
        except sqlite3.Error as e:  # an SQLite error escaping the open is a finding of its own
            out["follow-symlinks" if follow else "default"] = {"escaped": 1, "error": str(e)}
    return out


def campaign(tmp: Path, fuzz: int = 40, seed: int = 39, opens: int = 20_000, timeout_s: float = 60.0,
             cap_mb: int = 4096) -> int:
    """Section 11 of the robustness report; returns the count of bad outcomes (timeouts, runaways, crashes,
    outside reads)."""
    say("## 11. Hostile SQLite (Nsight exports)\n")
    bad, per_class = files_campaign(tmp, fuzz, seed, timeout_s, cap_mb)
    race = swap_race(tmp, opens) if opens else {}
    say("### Summary per defect class\n")
    say("| class | files | report | clear error | timeout | memory runaway | crash | worst s | worst peak MB |")
    say("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for cls, (c, (s, mb)) in per_class.items():
        crashes = sum(v for k, v in c.items() if k.startswith("crash"))
        say(f"| {cls} | {sum(c.values())} | {c.get('report', 0)} | {c.get('clear error', 0)} | {c.get('timeout', 0)} | "
            f"{c.get('memory runaway', 0)} | {crashes} | {s:.1f} | {mb:.0f} |")
    for setting, seen in race.items():
        outside = seen.get("outside", 0) + seen.get("escaped", 0)
        bad += outside
        say(f"| swap race, {setting} | {opens:,} opens | inside {seen.get('inside', 0):,} | refused "
            f"{seen.get('refused', 0):,} | | | outside reads **{seen.get('outside', 0)}** | swaps {seen.get('swaps', 0):,} | |")
    say(f"\n**SQLite campaign: {bad} bad outcomes** (timeouts, memory runaways, crashes, outside reads)\n")
    return bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fuzz", type=int, default=40, help="fuzzed exports (default 40)")
    ap.add_argument("--seed", type=int, default=39)
    ap.add_argument("--opens", type=int, default=20_000, help="swap-race opens per setting (0: no race)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per file")
    ap.add_argument("--cap-mb", type=int, default=4096, help="peak RSS per file before it is killed")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="tbga-sqlite-"))
    try:
        return 1 if campaign(tmp, args.fuzz, args.seed, args.opens, args.timeout, args.cap_mb) else 0
    finally:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
