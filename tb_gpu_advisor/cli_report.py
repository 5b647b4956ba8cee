"""``tb-gpu-advisor report LOGDIR``: analyse profiles and print the findings.

Usage::

    tb-gpu-advisor report LOGDIR [--run RUN] [--session S] [--host H]
                          [--format text|json|markdown] [--fail-on warning|critical]
                          [--params N] [--top N] [--progress]

Default selection: the newest session of every run (or of ``--run``).

Output: ``text`` (default; findings first, then headline numbers and a
per-GPU table), ``json`` (the report schema, ``docs/report-schema.md``: one
Report object for one session, a JSON array of Reports for several) or
``markdown`` (for pull requests).  ``--top`` limits the findings shown in
text and markdown; JSON always carries all of them.

Exit codes:
  0  analysed; no finding at or above ``--fail-on`` (or no ``--fail-on``)
  1  a finding at or above ``--fail-on`` (``warning`` includes critical)
  2  usage or input error: bad option, logdir missing or without profiles,
     unknown run / session / host, unreadable profile
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any, Sequence, TextIO

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_INPUT = 2

HOW_TO_CAPTURE = """\
How to capture a profile (TensorFlow 2.x, about ten seconds of steady-state steps):
  Keras:   tf.keras.callbacks.TensorBoard(log_dir=LOGDIR, profile_batch=(100, 120))
  Custom:  tf.profiler.experimental.start(LOGDIR); <20 steps>; tf.profiler.experimental.stop()
Profiles are written to LOGDIR/<run>/plugins/profile/<session>/<host>.xplane.pb."""


class InputError(Exception):
    """A user-facing problem with the arguments or the logdir (exit code 2)."""


def add_parser(subparsers: Any) -> None:
    """Register ``report`` (called by cli.py)."""
    p = subparsers.add_parser(
        "report",
        help="analyse GPU profiles in LOGDIR and print ranked findings",
        description="Check the TensorFlow/JAX GPU profiles in LOGDIR against the TensorFlow GPU performance guide "
        "and print ranked findings with estimated savings and fixes. Default: the newest session of every run.",
        epilog="exit codes: 0 ok; 1 a finding at or above --fail-on; 2 usage or input error",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("logdir", metavar="LOGDIR", help="TensorBoard logdir (local path, s3://, gs://, ...)")
    p.add_argument("--run", help="only this run (default: every run); '.' is the logdir itself")
    p.add_argument("--session", help="this session (capture timestamp folder) instead of the newest")
    p.add_argument("--host", action="append", metavar="H",
                   help="only this host file (name without .xplane.pb); repeat for several")
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text", help="output format (default text)")
    p.add_argument("--fail-on", choices=("warning", "critical"), default=None,
                   help="exit 1 if any finding is at or above this severity (for CI)")
    p.add_argument("--params", type=_positive_int, default=None, metavar="N",
                   help="model parameter count (Model.summary) for the expected AllReduce time (guide §2.1)")
    p.add_argument("--top", type=_non_negative_int, default=10, metavar="N",
                   help="findings shown in text/markdown (default 10; JSON has all)")
    p.add_argument("--evidence", type=_non_negative_int, default=0, metavar="ROWS",
                   help="text format: also print the first ROWS rows of each finding's evidence table")
    p.add_argument("--progress", action="store_true",
                   help="print progress on stderr even when stderr is not a terminal")
    p.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE instead of stdout")
    p.set_defaults(func=run)


def _positive_int(s: str) -> int:
    v = _int(s)
    if v <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {s!r}")
    return v


def _non_negative_int(s: str) -> int:
    v = _int(s)
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {s!r}")
    return v


def _int(s: str) -> int:
    """Integers, also written 110_000_000, 110,000,000 or 1.1e8."""
    t = s.replace("_", "").replace(",", "").strip()
    try:
        return int(t)
    except ValueError:
        pass
    try:
        f = float(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {s!r}") from None
    if not f.is_integer():
        raise argparse.ArgumentTypeError(f"not a whole number: {s!r}")
    return int(f)


# --------------------------------------------------------------------------- entry


def run(args: argparse.Namespace, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    try:
        sessions = select_sessions(args.logdir, args.run, args.session, args.host)
        reports = [_analyze(s, hosts, args, stderr) for s, hosts in sessions]
    except InputError as e:
        print(f"tb-gpu-advisor report: error: {e}", file=stderr)
        return EXIT_INPUT
    text = format_reports(reports, args.format, args.top, getattr(args, "evidence", 0))
    if getattr(args, "output", None):
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        stdout.write(text)
        stdout.flush()
    return exit_code(reports, args.fail_on)


def exit_code(reports: Sequence[Any], fail_on: str | None) -> int:
    from .report_schema import SEVERITY_ORDER

    if not fail_on:
        return EXIT_OK
    limit = SEVERITY_ORDER[fail_on]
    for r in reports:
        if any(SEVERITY_ORDER.get(f.severity, 9) <= limit for f in r.findings):
            return EXIT_FINDINGS
    return EXIT_OK


def format_reports(reports: Sequence[Any], fmt: str, top: int | None = 10, evidence_rows: int = 0) -> str:
    from . import render

    if fmt == "json":
        if len(reports) == 1:
            return reports[0].to_json(indent=2) + "\n"
        return "[\n" + ",\n".join(r.to_json(indent=2) for r in reports) + "\n]\n"
    if fmt == "markdown":
        return "\n".join(render.to_markdown(r, top=top) for r in reports)
    sep = "\n" + "-" * 100 + "\n\n"
    return sep.join(render.to_text(r, top=top, evidence_rows=evidence_rows) for r in reports)


# --------------------------------------------------------------------------- selection


def select_sessions(logdir: str, run: str | None, session: str | None, hosts: Sequence[str] | None) -> list[tuple]:
    """[(Session, [HostFile])] to analyse, or InputError with the available choices."""
    from . import discovery, fsio

    if not fsio.is_remote(logdir) and not os.path.isdir(fsio.local_path(logdir)):
        raise InputError(f"{logdir}: no such directory")
    try:
        found = discovery.discover(logdir)
    except Exception as e:  # noqa: BLE001 -- e.g. remote credentials, permission
        raise InputError(f"cannot list {logdir}: {e}") from e
    if not found:
        raise InputError(f"no GPU profiles (*.xplane.pb) found in {logdir}.\n{HOW_TO_CAPTURE}")
    runs = sorted({s.run for s in found})
    if run is not None:
        run = run.rstrip("/") or "."
        if run not in runs:
            raise InputError(f"unknown run {run!r}. Available runs: {_list(runs)}")
        found = [s for s in found if s.run == run]
    if session is not None:
        chosen = [s for s in found if s.session == session]
        if not chosen:
            avail = [s.stock_run for s in found]
            raise InputError(f"unknown session {session!r}{f' in run {run!r}' if run else ''}. "
                             f"Available sessions: {_list(avail)}")
    else:
        chosen, seen = [], set()
        for s in found:  # discover(): within a run, newest session first
            if s.run not in seen:
                seen.add(s.run)
                chosen.append(s)
    out = []
    for s in chosen:
        hs = list(s.hosts)
        if hosts:
            want = set(hosts)
            hs = [h for h in hs if h.host in want]
            if not hs:
                continue
        out.append((s, hs))
    if not out:
        avail = sorted({h.host for s in chosen for h in s.hosts})
        raise InputError(f"unknown host {', '.join(hosts or [])!r}. Available hosts: {_list(avail)}")
    return out


def _list(xs: Sequence[str], n: int = 30) -> str:
    xs = list(xs)
    more = f" ... ({len(xs) - n} more)" if len(xs) > n else ""
    return ", ".join(xs[:n]) + more


# --------------------------------------------------------------------------- analysis


def _analyze(session: Any, hosts: list, args: argparse.Namespace, stderr: TextIO) -> Any:
    from . import analyze

    show = bool(getattr(args, "progress", False)) or _isatty(stderr)
    name = session.stock_run
    progress = _Progress(stderr, name) if show else None
    try:
        report = analyze.analyze_session(session.run, session.session, hosts, progress=progress, params=args.params)
    except (OSError, ValueError) as e:
        raise InputError(f"cannot analyse {name}: {e}") from e
    finally:
        if progress is not None:
            progress.done()
    return report


def _isatty(f: TextIO) -> bool:
    try:
        return f.isatty()
    except (AttributeError, ValueError):
        return False


class _Progress:
    """Progress callback for analyze_session: ``(fraction, message)`` or ``(message, fraction)``.

    One line per update at most every 0.5 s; on a terminal it rewrites the
    same line.
    """

    def __init__(self, out: TextIO, name: str, every_s: float = 0.5):
        self.out, self.name, self.every_s = out, name, every_s
        self.last = 0.0
        self.tty = _isatty(out)
        self.wrote = False

    def __call__(self, message: str, fraction: float | None = None) -> None:
        frac, msg = fraction, message
        now = time.monotonic()
        if now - self.last < self.every_s and (frac or 0) < 1.0:
            return
        self.last = now
        line = f"[{self.name}] {'' if frac is None else f'{frac * 100:3.0f}% '}{msg}"
        if self.tty:
            self.out.write("\r\033[K" + line[:120])
        else:
            self.out.write(line + "\n")
        self.out.flush()
        self.wrote = True

    def done(self) -> None:
        if self.tty and self.wrote:
            self.out.write("\r\033[K")
            self.out.flush()
