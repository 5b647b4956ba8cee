"""Golden reports: prove that a refactor changes no report, byte for byte.

Why: moving modules between stages (issue #17) must leave every report as it was.  This script
writes the JSON, Markdown and text report of every session of every logdir we hold -- the demo
logs, a synthetic corpus written once from the generators, and every real set under
``../shared/profiles`` -- into a folder outside the repo, and compares a later run with it.

It drives the installed ``tb-gpu-advisor`` command only (its CLI is the contract that stays put
while modules move), with the report cache off.  Version fields (``analyzer_version``,
``schema_version``, ``generated_at``) are dropped before comparing.

    python scripts/golden.py inputs  GOLDEN      # once: synthetic corpus into GOLDEN/inputs
    python scripts/golden.py write   GOLDEN/before
    ... move code ...
    python scripts/golden.py write   GOLDEN/after
    python scripts/golden.py compare GOLDEN/before GOLDEN/after

``--here`` (before the sub-command) runs this checkout's code instead of the installed command:
``python -m tb_gpu_advisor.cli`` with this checkout first on ``PYTHONPATH`` (a worktree while the editable install
points at another).  ``compare --exact`` compares the JSON reports byte for byte (only the ``generated_at`` value
masked) instead of after re-serialising them, so a change of key order, float spelling or indentation shows.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "profiles"
#: Keys whose values change with the version or the clock, not with the analysis.
VOLATILE = ("analyzer_version", "schema_version", "generated_at", "tool_version", "version")
FORMATS = ("json", "markdown", "text")


#: Set by ``--here``: run this checkout's package through ``python -m`` rather than the installed console script.
HERE = False


def _cli() -> list[str]:
    if HERE:
        return [sys.executable, "-m", "tb_gpu_advisor.cli"]
    exe = shutil.which("tb-gpu-advisor", path=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    if not exe:
        sys.exit("tb-gpu-advisor is not installed in this environment (pip install -e .)")
    return [exe]


def _env() -> dict[str, str]:
    env = {**os.environ, "TB_GPU_ADVISOR_CACHE_DIR": "off"}
    if HERE:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    return env


def make_inputs(golden: Path) -> None:
    """Write the synthetic corpus (TF, JAX, PyTorch scenarios, each broken and fixed) once, plus the V100 file in a logdir."""
    out = golden / "inputs"
    code = f"""
import sys
from pathlib import Path
out = Path({str(out)!r})
try:
    from synthetic import scenarios as S, jaxcapture as J, torchtrace as T
except ImportError:
    from synthetic import scenarios as S, jaxcapture as J, torchtrace as T
for name, make in S.SCENARIOS.items():
    make().write(out / "corpus_tf")
    try:
        make(fixed=True).write(out / "corpus_tf", run=name + "_fixed")
    except TypeError:
        pass
for name, make in J.JAX_SCENARIOS.items():
    make().write(out / "corpus_jax")
for name in T.SCENARIOS:
    T.write_run(str(out / "corpus_torch"), name, steps=8)
"""
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO, env={**_env(), "PYTHONPATH": str(REPO / "tests")})
    v100 = SHARED / "v100_bert_8gpu_tf24.xplane.pb"
    if v100.exists():
        dst = out / "v100" / "bert" / "plugins" / "profile" / "2021_06_01_00_00_00"
        dst.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(v100, dst / "v100_bert_8gpu_tf24.xplane.pb")
    print(f"inputs written to {out}")


def logdirs(golden: Path) -> dict[str, Path]:
    """Every logdir the golden set covers, by a stable name."""
    sets = {"demo_logs": REPO / "demo_logs"}
    inputs = golden.parent / "inputs" if (golden.parent / "inputs").is_dir() else golden / "inputs"
    for p in sorted(inputs.iterdir()) if inputs.is_dir() else []:
        sets[p.name] = p
    for p in sorted(SHARED.iterdir()) if SHARED.is_dir() else []:
        if p.is_dir():
            sets[p.name] = p
    return sets


def sessions(logdir: Path) -> list[tuple[str, str]]:
    """(run, session) of every session ``report --list`` names."""
    out = subprocess.run(_cli() + ["report", str(logdir), "--list"], capture_output=True, text=True, env=_env())
    rows = []
    for line in out.stdout.splitlines()[1:]:
        key = line.split()[0] if line.strip() else ""
        if "/" in key:
            run, session = key.rsplit("/", 1)
            rows.append((run, session))
    return rows


def _one(logdir: Path, run: str, session: str, fmt: str) -> tuple[str, str]:
    cmd = _cli() + ["report", str(logdir), "--run", run, "--session", session, "--format", fmt, "--evidence", "5"] \
        if fmt == "text" else _cli() + ["report", str(logdir), "--run", run, "--session", session, "--format", fmt]
    p = subprocess.run(cmd, capture_output=True, text=True, env=_env())
    text = p.stdout + f"\n--- exit {p.returncode}\n" + p.stderr
    return fmt, text


def write(dest: Path) -> None:
    """Every report of every session in every format into ``dest/<set>/<run>/<session>.<fmt>``."""
    jobs = []
    with cf.ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        for name, logdir in logdirs(dest).items():
            for run, session in sessions(logdir):
                for fmt in FORMATS:
                    path = dest / name / run.replace("/", "__") / f"{session}.{fmt}"
                    jobs.append((path, pool.submit(_one, logdir, run, session, fmt)))
        for path, fut in jobs:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(fut.result()[1], encoding="utf-8")
    print(f"{len(jobs)} reports written to {dest}")


def _normal(path: Path, exact: bool = False) -> str:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json" and exact:
        return re.sub(r'("generated_at": )"[^"]*"', r'\1"TIME"', text)
    if path.suffix == ".json":
        body, _, tail = text.partition("\n--- exit ")
        try:
            obj = json.loads(body)
        except ValueError:
            return text
        return json.dumps(_strip(obj), indent=1, sort_keys=True) + "\n--- exit " + tail
    return re.sub(r"\b0\.1\.0\+a\d+\b", "VERSION", text)


def _strip(obj):
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in obj.items() if k not in VOLATILE}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    return obj


def compare(a: Path, b: Path, exact: bool = False) -> int:
    """0 when every report in ``a`` equals its twin in ``b`` (volatile fields aside); else print the first diffs."""
    fa = {p.relative_to(a) for p in a.rglob("*") if p.is_file()}
    fb = {p.relative_to(b) for p in b.rglob("*") if p.is_file()}
    bad = 0
    for rel in sorted(fa ^ fb):
        print(f"only in {'before' if rel in fa else 'after'}: {rel}")
        bad += 1
    for rel in sorted(fa & fb):
        x, y = _normal(a / rel, exact), _normal(b / rel, exact)
        if x != y:
            bad += 1
            if bad <= 5:
                print(f"--- differs: {rel}")
                sys.stdout.writelines(list(difflib.unified_diff(x.splitlines(True), y.splitlines(True), n=1))[:40])
    print(f"{len(fa & fb)} reports compared, {bad} differ")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--here", action="store_true",
                    help="run this checkout's code (python -m tb_gpu_advisor.cli, PYTHONPATH) not the installed command")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("inputs").add_argument("golden", type=Path)
    sub.add_parser("write").add_argument("dest", type=Path)
    c = sub.add_parser("compare")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    c.add_argument("--exact", action="store_true", help="JSON byte for byte (generated_at masked), not re-serialised")
    args = ap.parse_args(argv)
    global HERE
    HERE = args.here
    if args.cmd == "inputs":
        make_inputs(args.golden)
    elif args.cmd == "write":
        write(args.dest)
    else:
        return compare(args.a, args.b, args.exact)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
