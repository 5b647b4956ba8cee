"""Every figure of issue #30 in one run: each stage against its floor, the stock tool and HTA, on one machine and load.

    python benchmarks/issue30.py                      # 100 MB and 1 GB (long: the 1 GB rows take minutes each)
    python benchmarks/issue30.py --sizes-mb 100       # the 100 MB rows only
    python benchmarks/issue30.py --sizes-mb 5 --skip kineto_hta   # a smoke run

Why one script: the issue asks for the figures side by side, measured under the same load -- the machine's load
moves every figure by tens of percent, so tables measured an hour apart do not compare.  Each part is its own
benchmark (read its docstring for how it measures); this runs them back to back, prints the machine and its load
before and after, and saves the whole report as ``.bench/issue30-<time>.md``:

* ``kineto``: the PyTorch reader through ``report`` against msgspec's typed decode of the same file
  (``kineto_floor.py``);
* ``xplane``: XPlane through ``report`` against a bare protobuf parse, and the stock overview
  (``xplane_floor.py``); where the compiled XPlane decoder is built, each row also on the pure-Python one
  (``TB_GPU_ADVISOR_PURE_PYTHON=1``) with the ratio of the two;
* ``kineto_hta``: the Advisor against Holistic Trace Analysis on the same PyTorch traces (``hta_compare.py``;
  needs an interpreter with HTA, ``--hta-python``);
* ``json``: writing the report as JSON, ``asdict`` + ``json.dumps`` against ``common.jsonout`` (``json_write.py``);
* ``startup``: the CLI's fixed cost above the bare interpreter (``cli_startup.py``).
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
PARTS = ("kineto", "xplane", "kineto_hta", "json", "startup")


def commands(sizes_mb: list[int], hta_python: str | None) -> dict[str, list[str]]:
    """Each part's command line, its sizes in the spelling that script takes."""
    mb = ",".join(str(s) for s in sizes_mb)
    units = ",".join(f"{s // 1000}GB" if s >= 1000 and s % 1000 == 0 else f"{s}MB" for s in sizes_mb)
    py = sys.executable
    hta = [py, os.path.join(HERE, "hta_compare.py"), "--sizes", mb]
    if hta_python:
        hta += ["--hta-python", hta_python]
    return {"kineto": [py, os.path.join(HERE, "kineto_floor.py"), "--sizes", mb],
            "xplane": [py, os.path.join(HERE, "xplane_floor.py"), "--sizes", units],
            "kineto_hta": hta,
            "json": [py, os.path.join(HERE, "json_write.py")],
            "startup": [py, os.path.join(HERE, "cli_startup.py")]}


def machine() -> str:
    load = os.getloadavg() if hasattr(os, "getloadavg") else ("?",) * 3
    sys.path.insert(0, REPO)
    from tb_gpu_advisor.formats.xplane.compiled import describe

    return (f"{platform.node()}: {os.cpu_count()} CPUs, {platform.python_implementation()} "
            f"{platform.python_version()}, load average {' / '.join(f'{x:.2f}' for x in load)}; {describe()}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes-mb", default="100,1000", help="capture sizes in MB (default %(default)s)")
    ap.add_argument("--skip", default="", help=f"parts to leave out, comma-separated, of {', '.join(PARTS)}")
    ap.add_argument("--hta-python", default=None, help="an interpreter with HolisticTraceAnalysis installed")
    ap.add_argument("--timeout", type=float, default=7200.0, help="seconds per part")
    a = ap.parse_args(argv)
    sizes = [int(s) for s in a.sizes_mb.split(",") if s.strip()]
    skip = {s.strip() for s in a.skip.split(",") if s.strip()}
    unknown = skip - set(PARTS)
    if unknown:
        ap.error(f"unknown parts: {', '.join(sorted(unknown))} (parts: {', '.join(PARTS)})")
    out = [f"# Issue #30 benchmarks, {time.strftime('%Y-%m-%d %H:%M:%S %Z')}", "", f"Start: {machine()}", ""]
    failed = []
    for name, cmd in commands(sizes, a.hta_python).items():
        if name in skip:
            continue
        print(f"== {name}: {' '.join(cmd)}", file=sys.stderr, flush=True)
        t = time.time()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=a.timeout, check=False)
            body, rc = p.stdout.strip() or p.stderr.strip()[-2000:], p.returncode
        except subprocess.TimeoutExpired:
            body, rc = f"(stopped after {a.timeout:g} s)", -1
        if rc != 0:
            failed.append(name)
        out += [f"## {name} ({time.time() - t:.0f} s wall{'' if rc == 0 else f', exit {rc}'})", "", body, ""]
    out += [f"End: {machine()}", ""]
    text = "\n".join(out)
    print(text)
    os.makedirs(os.path.join(REPO, ".bench"), exist_ok=True)
    path = os.path.join(REPO, ".bench", f"issue30-{time.strftime('%Y%m%d-%H%M%S')}.md")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"saved {path}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
