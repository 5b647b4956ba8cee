"""Writing a report as JSON (issue #30 item 3): ``dataclasses.asdict`` + ``json.dumps`` against ``common.jsonout``.

The report of ``--file`` is analysed once (report cache off); then each writer runs ``--repeat`` times on that same
Report, interleaved, and the table prints the median and minimum CPU seconds (``time.process_time``) of each:

* ``report --format json`` -- the CLI's output with ``--run`` (``Report.to_json(indent=2)``);
* ``host cache JSON`` -- each HostReport as the per-host cache stores it (compact ``HostReport.to_json()``);
* ``Report.to_dict`` -- the dict the server and ``report_set`` hand on.

The reference column is what the code did before: ``json.dumps(dataclasses.asdict(...), ...)``.  Both writers'
texts are compared once (they must be equal; the script says so or exits 1).  With ``--cli CHECKOUT...``, each
checkout's whole ``report --format json`` command also runs ``--repeat`` times in a fresh interpreter (interleaved),
its CPU seconds (user + system of the child) printed.

    python benchmarks/json_write.py                                   # the V100 BERT capture of ../shared/profiles
    python benchmarks/json_write.py --cli /tmp/base .                 # also the whole command, before and after

Nothing is asserted about time: the table says what was measured, with the machine's load.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_FILE = os.path.join(os.path.dirname(REPO), "shared", "profiles", "v100_bert_8gpu_tf24.xplane.pb")
if not os.path.exists(DEFAULT_FILE):  # a checkout without ../shared: a real capture the repository holds
    DEFAULT_FILE = os.path.join(REPO, "tests", "fixtures", "wild", "amd_mi250")


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} / {five:.2f} (1 / 5 min) on {os.cpu_count()} cores"


def _logdir(path: str, tmp: str) -> str:
    """A logdir holding ``path`` (an .xplane.pb needs its <run>/plugins/profile/<session>/ layout; copied, since a
    symlink leading out of the logdir is never read), or ``path``."""
    if os.path.isdir(path) or not path.endswith(".xplane.pb"):
        return path
    dst = os.path.join(tmp, "run", "plugins", "profile", "2021_06_01_00_00_00")
    os.makedirs(dst)
    shutil.copyfile(path, os.path.join(dst, os.path.basename(path)))
    return tmp


def _cpu(fn, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        out.append(time.process_time() - t0)
    return out


def _child_cpu(checkout: str, logdir: str, run: str) -> float:
    """CPU seconds (user + system) of one ``report --format json`` of ``checkout`` in a fresh interpreter."""
    env = dict(os.environ, TB_GPU_ADVISOR_CACHE_DIR="off", PYTHONPATH=os.path.abspath(checkout))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "tb_gpu_advisor.cli", "report", logdir, "--run", run, "--format", "json"],
                   env=env, cwd=checkout, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--file", default=DEFAULT_FILE, help="profile file or logdir (default: %(default)s)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--cli", nargs="*", default=[], metavar="CHECKOUT",
                    help="also time the whole `report --format json` command of these checkouts")
    args = ap.parse_args(argv)
    sys.path.insert(0, REPO)
    os.environ["TB_GPU_ADVISOR_CACHE_DIR"] = "off"
    from tb_gpu_advisor.cli import report as cli_report
    from tb_gpu_advisor.cli.main import build_parser
    from tb_gpu_advisor.common import jsonout
    from tb_gpu_advisor.model.schema import _json_default

    print(f"# {platform.node()}: {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
          f"{_load()} before")
    with tempfile.TemporaryDirectory() as tmp:
        logdir = _logdir(args.file, tmp)
        ns = build_parser(["report"]).parse_args(["report", logdir])
        advisor = cli_report.cli_opts.advisor(ns)
        (session, hosts), = cli_report.select_sessions(advisor, None, None, None)
        report = cli_report.session_report(advisor, dataclasses.replace(session, hosts=tuple(hosts)), sys.stderr,
                                           False)
        rows = sum(len(h.step_rows) for h in report.hosts)
        print(f"# {os.path.basename(args.file)}: {len(report.hosts)} host(s), {rows} step rows, "
              f"{len(report.findings)} findings")

        def asdict_indent():
            return json.dumps(dataclasses.asdict(report), indent=2, allow_nan=False, default=_json_default)

        def asdict_hosts():
            return [json.dumps(dataclasses.asdict(h), allow_nan=False, default=_json_default) for h in report.hosts]

        cases = [
            ("report --format json (indent 2)", asdict_indent, lambda: jsonout.dumps(report, 2, _json_default)),
            ("host cache JSON (compact)", asdict_hosts, lambda: [h.to_json() for h in report.hosts]),
            ("Report.to_dict", lambda: dataclasses.asdict(report), lambda: jsonout.plain(report)),
        ]
        same = asdict_indent() == report.to_json(indent=2) and asdict_hosts() == [h.to_json() for h in report.hosts]
        print(f"# texts equal to the asdict reference: {same}; JSON {len(report.to_json(indent=2)) / 1e6:.1f} MB")
        print("| writer | asdict + json.dumps: median CPU s | min | jsonout: median CPU s | min | ratio |")
        print("|---|---:|---:|---:|---:|---:|")
        for name, ref, new in cases:
            a, b = [], []
            for _ in range(args.repeat):  # interleaved: a load spike hits both
                a += _cpu(ref, 1)
                b += _cpu(new, 1)
            ma, mb = statistics.median(a), statistics.median(b)
            print(f"| {name} | {ma:.3f} | {min(a):.3f} | {mb:.3f} | {min(b):.3f} | {ma / mb:.1f}x |")
        if args.cli:
            for c in args.cli:  # as pip install does: without .pyc (PYTHONDONTWRITEBYTECODE) each run compiles the package
                subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(c, "tb_gpu_advisor")], check=True)
            times: dict[str, list[float]] = {c: [] for c in args.cli}
            for _ in range(args.repeat):
                for c in args.cli:
                    times[c].append(_child_cpu(c, logdir, session.run))
            print("\n| checkout: `report LOGDIR --run RUN --format json`, fresh interpreter | median CPU s | min |")
            print("|---|---:|---:|")
            for c, ts in times.items():
                print(f"| {os.path.abspath(c)} | {statistics.median(ts):.2f} | {min(ts):.2f} |")
    print(f"# {_load()} after; {args.repeat} runs each")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
