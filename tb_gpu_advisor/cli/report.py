"""``tb-gpu-advisor report LOGDIR``: analyse profiles and print the findings.

Usage::

    tb-gpu-advisor report LOGDIR [--run RUN] [--session S] [--host H]
                          [--format text|json|markdown] [--fail-on warning|critical]
                          [--params N] [--net-gbps GBPS] [--model-flops-per-step FLOPS] [--top N] [--progress]

Default selection: the newest session of every run (or of ``--run``).  Reports come from the report cache
when ``precompute``, the tab or an earlier command stored them (``--cache-dir``; ``Advisor.report``).  The options
every sub-command shares (settings, cache folder, ``--follow-symlinks``) are defined once in ``cli/options.py``.

Output: ``text`` (default; findings first, then headline numbers and a
per-GPU table), ``json`` (the report schema, ``docs/report-schema.md``) or
``markdown`` (for pull requests).  ``--top`` limits the findings shown in
text and markdown; JSON always carries all of them.

JSON is always one object: with ``--run`` (one run, so one session) the
Report itself; without ``--run`` a ReportSet ``{"schema_version", "logdir",
"healthy", "reports": [Report, ...]}``, also when the logdir holds one run.
The shape depends on the command line only, never on what the logdir holds.

Exit codes:
  0  analysed; no finding at or above ``--fail-on`` (or no ``--fail-on``)
  1  a finding at or above ``--fail-on`` (``warning`` includes critical)
  2  usage or input error: bad option, logdir missing or without profiles
     (or with profiles in the wrong folder layout), unknown run / session /
     host, or a profile that could not be analysed (unreadable, not a
     profile, no events) or only partly (a damaged file: cut off
     mid-write).  The report is still printed; an analysed host never
     hides another host's error, so 2 wins over 1.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import TYPE_CHECKING, Any, Sequence, TextIO

from tb_gpu_advisor.cli import options as cli_opts
from tb_gpu_advisor.common import fsio
from tb_gpu_advisor.common.fmt import and_list, echo, echo_list
from tb_gpu_advisor.common.options import UserOptions

# The analysis (formats, the entry point, the report's schema and renderers) is imported where it is used, so that
# ``report --help`` and a usage error wait for none of it (issue #30 item 3; tests/cli/test_cli_lazy_imports.py).
if TYPE_CHECKING:
    from tb_gpu_advisor.runtime.advisor import Advisor

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_INPUT = 2




class InputError(Exception):
    """A user-facing problem with the arguments or the logdir (exit code 2)."""


def add_parser(subparsers: Any) -> None:
    """Register ``report`` (called by cli.py)."""
    p = subparsers.add_parser(
        "report",
        help="analyse GPU profiles in LOGDIR and print ranked findings",
        description=f"Check the {and_list(cli_opts.FRAMEWORK_NAMES)} GPU profiles in LOGDIR against the TensorFlow GPU "
        "performance guide and print ranked findings with estimated savings and fixes. "
        "Default: the newest session of every run.",
        epilog="exit codes: 0 ok; 1 a finding at or above --fail-on; 2 usage or input error "
        "(also: a profile that could not be analysed, or only partly: a damaged file)\n"
        "json: one Report object with --run, else {\"reports\": [Report, ...]} (docs/report-schema.md)",
    )
    p.add_argument("logdir", metavar="LOGDIR", help="TensorBoard logdir (local path, s3://, gs://, ...)")
    p.add_argument("--run", help="only this run (default: every run); '.' is the logdir itself")
    p.add_argument("--session", metavar="S",
                   help="this session instead of the newest: its folder name (capture timestamp) or RUN/SESSION "
                        "as the stock Profile tab and the 'unknown session' message name it")
    p.add_argument("--host", action="append", metavar="H",
                   help="only this host file (name without .xplane.pb); repeat for several")
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text", help="output format (default text)")
    p.add_argument("--fail-on", choices=("warning", "critical"), default=None,
                   help="exit 1 if any finding is at or above this severity (for CI)")
    cli_opts.add_common(p)
    p.add_argument("--top", type=cli_opts.non_negative_int, default=10, metavar="N",
                   help="findings shown in text/markdown (default 10; JSON has all)")
    p.add_argument("--evidence", type=cli_opts.non_negative_int, default=0, metavar="ROWS",
                   help="text format: also print the first ROWS rows of each finding's evidence table")
    p.add_argument("--progress", action="store_true",
                   help="print progress on stderr even when stderr is not a terminal")
    p.add_argument("--list", action="store_true",
                   help="list the runs and sessions found (format, hosts, size) instead of analysing them")
    p.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE instead of stdout")
    p.set_defaults(func=run)


# --------------------------------------------------------------------------- entry


def run(args: argparse.Namespace, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    advisor = cli_opts.advisor(args)
    older: list[Any] = []
    try:
        sessions = select_sessions(advisor, args.run, args.session, args.host, older)
        if getattr(args, "list", False):
            stdout.write(list_sessions(advisor, args.run))
            print_skipped(_skipped(advisor), stderr, "report")
            return 0
        reports = [_analyze(advisor, s, hosts, args, stderr) for s, hosts in sessions]
    except InputError as e:
        print(f"tb-gpu-advisor report: error: {e}", file=stderr)
        return EXIT_INPUT
    single = args.run is not None
    fmt_args = (reports, args.format, args.top, getattr(args, "evidence", 0), single, args.logdir)
    if getattr(args, "output", None):
        with open(args.output, "w", encoding="utf-8") as fh:
            write_reports(fh, *fmt_args)
    else:
        write_reports(stdout, *fmt_args)
        stdout.flush()
    for line in host_errors(reports):
        print(f"tb-gpu-advisor report: error: {line}", file=stderr)
    print_skipped(_skipped(advisor), stderr, "report")
    print_older(older, stderr, "report")
    return exit_code(reports, args.fail_on)


def print_older(older: Sequence[Any], out: TextIO, who: str, n: int = 10) -> None:
    """The sessions each run's newest one was chosen over, named on ``out`` with how to read them.

    Why: a run folder holding two captures reads its newest only, and the other was in no report and named nowhere --
    a trace the user gave that silently vanished (h37-probe45c: a rank's file the layout put in a session of its own
    beside its job's).  Said, never analysed unasked: several captures of one run are the user's to choose from."""
    if not older:
        return
    names = [s.stock_run for s in older]
    print(f"{who}: {len(names)} older session{'' if len(names) == 1 else 's'} not analysed (each run's newest is): "
          f"{_list(names, n)}; --session RUN/SESSION reads one, --list lists them", file=out)


def print_skipped(skips: list[tuple[str, str]], out: TextIO, who: str) -> None:
    """What discovery left out of the logdir, with why (symlinks leaving it, JSON files that are no trace): never
    silently."""
    if not skips:
        return
    print(f"{who}: skipped {len(skips)} entr{'y' if len(skips) == 1 else 'ies'} of the logdir:", file=out)
    for rel, why in skips:
        print(f"    {rel}: {why}", file=out)


def _skipped(advisor: Advisor) -> list[tuple[str, str]]:
    """What discovery left out of a logdir folder (nothing for a single file given on the command line)."""
    return advisor.skipped() if os.path.isdir(fsio.local_path(advisor.logdir)) else []


def list_sessions(advisor: Advisor, run: str | None = None) -> str:
    """Every session found (of ``run`` only, if given), newest first per run: run/session, format, hosts, size."""

    from tb_gpu_advisor import formats
    from tb_gpu_advisor.formats.base import human_size

    # each size in its own unit ("96.3 KiB", not "0.0 MB": issue #36)
    rows = [(s.stock_run, formats.get(s.format).name, str(len(s.hosts)), human_size(s.size))
            for s in advisor.sessions() if run is None or s.run == (run.rstrip("/") or ".")]
    head = ("session", "format", "hosts", "size")
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(4)]
    table = "".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() + "\n" for r in [head] + rows)
    said: set[frozenset[str]] = set()
    lines = []
    for s in advisor.sessions():
        job = frozenset((s.stock_run, *s.same_job))
        if s.same_job and job not in said and (run is None or s.run == (run.rstrip("/") or ".")):
            said.add(job)
            lines.append(_same_job_line(s))
        job = frozenset((s.stock_run, *s.rank_runs))
        if s.rank_runs and job not in said and (run is None or s.run == (run.rstrip("/") or ".")):
            said.add(job)
            lines.append(f"{', '.join(sorted(job))} are the ranks of one {s.job_ranks[1]}-rank job (their "
                         "distributedInfo; times within minutes), one run folder per rank, each analysed apart\n")
    return table + "".join(lines)


def _same_job_line(s: Any) -> str:
    """A session linked to another format's capture of the same job (``Session.same_job``), in words."""
    from tb_gpu_advisor import formats

    return (f"{s.stock_run} ({formats.get(s.format).name}) is the same job as {', '.join(s.same_job)}: one job's "
            f"captures in {len(s.same_job) + 1} formats (one run folder, times within minutes), each analysed apart\n")


def _damage_words(h: Any) -> str:
    """How the stderr line names a host's damage, by its kind (``report.verdict.damage_kind``, read off its typed
    records): partial where any of it is a cut; a file read to its end with records left unread, or read whole with
    records that contradict each other, says so -- nothing of either lies past it."""
    # imported where used, as this module does
    from tb_gpu_advisor.report.verdict import READ_TO_END_UNREADABLE, READ_WHOLE_CONTRADICTING, damage_kind

    kind = damage_kind(h)
    if kind == "cut":
        return "the file is damaged, the report is partial"
    return f"the file is damaged: {READ_TO_END_UNREADABLE if kind == 'unreadable' else READ_WHOLE_CONTRADICTING}"


def _error_damage(h: Any) -> str:
    """What a host's read error says its file's damage is, where its reader named one (``HostReport.damage_records``
    of an error host: a truncated protobuf, a corrupt database): `` [damage: cut, pickle_truncated at byte 9]``."""
    from tb_gpu_advisor.report.verdict import damage_records

    return "".join(f" [damage: {d.kind}, {d.what}" + (f" at byte {d.offset:,}" if d.offset is not None else "") + "]"
                   for d in damage_records(h)[:1])


def host_errors(reports: Sequence[Any]) -> list[str]:
    """One line per host that could not be analysed, or was read from a damaged file (its numbers are partial):
    ``<run>/<session> host <h> ...: <why>``, from the host's typed damage records."""
    from tb_gpu_advisor.report.verdict import damage_records

    out = []
    for r in reports:
        name = r.session if r.run == "." else f"{r.run}/{r.session}"
        out += [f"{name} host {echo(h.host)} could not be analysed: {h.error}{_error_damage(h)}"
                for h in r.hosts if h.error]
        out += [f"{name} host {echo(h.host)}: {_damage_words(h)}: {'; '.join(d.detail for d in records)}"
                for h in r.hosts if not h.error and (records := damage_records(h))]
        if not r.hosts:
            out.append(f"{name}: no host file to analyse")
    return out


def exit_code(reports: Sequence[Any], fail_on: str | None) -> int:
    """2 when any selected host could not be analysed or was read from a damaged file (input error; wins over 1),
    else 1 for a finding at or above ``fail_on``, else 0."""

    if host_errors(reports):
        return EXIT_INPUT
    if not fail_on:
        return EXIT_OK
    from tb_gpu_advisor.model.schema import SEVERITY_ORDER

    limit = SEVERITY_ORDER[fail_on]
    for r in reports:
        if any(SEVERITY_ORDER.get(f.severity, 9) <= limit for f in r.findings):
            return EXIT_FINDINGS
    return EXIT_OK


def report_set(reports: Sequence[Any], logdir: str | None = None, as_dicts: bool = True) -> dict[str, Any]:
    """The JSON object ``report --format json`` prints without ``--run``: every selected session's Report (as a
    dict; ``as_dicts=False``: the Report objects themselves, for :func:`_json_dumps`, which writes them directly)."""
    from tb_gpu_advisor.model.schema import SCHEMA_VERSION

    return {"schema_version": SCHEMA_VERSION, "logdir": logdir, "healthy": bool(reports) and all(r.healthy for r in reports),
            "reports": [r.to_dict() for r in reports] if as_dicts else list(reports)}


def write_reports(fh: TextIO, reports: Sequence[Any], fmt: str, top: int | None = 10, evidence_rows: int = 0,
                  single: bool = False, logdir: str | None = None) -> None:
    """:func:`format_reports` written to ``fh``; JSON as it is made (``jsonout.dump``), never as one string: a large
    capture's report is hundreds of MB of indented step rows."""
    if fmt != "json":
        fh.write(format_reports(reports, fmt, top, evidence_rows, single, logdir))
        return
    from tb_gpu_advisor.common import jsonout
    from tb_gpu_advisor.model.schema import _json_default

    if single and len(reports) != 1:
        raise ValueError(f"single=True needs exactly one report, got {len(reports)}")
    obj = reports[0] if single else report_set(reports, logdir, as_dicts=False)
    jsonout.dump(obj, fh, indent=2, default=_json_default)
    fh.write("\n")


def format_reports(reports: Sequence[Any], fmt: str, top: int | None = 10, evidence_rows: int = 0, single: bool = False,
                   logdir: str | None = None) -> str:
    """The report(s) in ``fmt``.  JSON is always one object: the Report when ``single`` (``--run``: exactly one
    session), else a :func:`report_set` -- never a bare list, and never a shape that depends on how many runs
    the logdir holds."""

    if fmt == "json":
        if single:
            if len(reports) != 1:
                raise ValueError(f"single=True needs exactly one report, got {len(reports)}")
            return reports[0].to_json(indent=2) + "\n"
        return _json_dumps(report_set(reports, logdir, as_dicts=False)) + "\n"
    from tb_gpu_advisor.report import render

    if fmt == "markdown":
        return "\n".join(render.to_markdown(r, top=top) for r in reports)
    sep = "\n" + "-" * 100 + "\n\n"
    return sep.join(render.to_text(r, top=top, evidence_rows=evidence_rows) for r in reports)


# --------------------------------------------------------------------------- selection


def select_sessions(advisor: Advisor, run: str | None, session: str | None, hosts: Sequence[str] | None,
                    left: list[Any] | None = None) -> list[tuple]:
    """[(Session, [HostFile])] to analyse, or InputError with the available choices.  The advisor's logdir may also
    be one profile file: its session and host are analysed.  ``left``, when given, receives the sessions the default
    (each run's newest) passed over, for :func:`print_older`."""

    logdir = advisor.logdir
    if not fsio.is_remote(logdir) and os.path.isfile(fsio.local_path(logdir)):
        return [_one_file(logdir, advisor.follow_symlinks)]
    if not fsio.is_remote(logdir) and not os.path.isdir(fsio.local_path(logdir)):
        raise InputError(f"{logdir}: no such directory")
    try:
        found = advisor.sessions()
    except Exception as e:  # noqa: BLE001 -- e.g. remote credentials, permission
        raise InputError(f"cannot list {logdir}: {e}") from e
    if not found:
        misplaced = advisor.misplaced()
        if misplaced:
            expected = " or ".join(dict.fromkeys(layout for _, layout in misplaced))
            raise InputError(f"wrong folder layout: expected {expected} in {logdir}, "
                             f"found {_list([rel for rel, _ in misplaced])}.\n"
                             "Move each profile into its session folder (a profile straight in the logdir goes "
                             "to LOGDIR/plugins/profile/<session>/, run '.'), or point LOGDIR at the folder "
                             "above the runs.")
        why = advisor.nothing_found(cli_opts.FOLLOW_FLAG)
        if why is not None:  # what was left out is the message: symlinks not followed or leading out, ...
            raise InputError(f"{why[0]} ({logdir}). {why[1]}")
        from tb_gpu_advisor.runtime.advisor import how_to_capture_text

        raise InputError(f"no GPU profiles found in {logdir}.\n{how_to_capture_text()}")
    runs = sorted({s.run for s in found})
    if run is not None:
        run = run.rstrip("/") or "."
        if run not in runs:
            raise InputError(f"unknown run {echo(run)}. Available runs: {_list(runs)}")
        found = [s for s in found if s.run == run]
    if session is not None:
        # the session folder name, or RUN/SESSION as the stock Profile tab (and the message below) names it
        session = session.rstrip("/") or session
        chosen = [s for s in found if s.named(session)]
        if not chosen:
            avail = [s.stock_run for s in found]
            raise InputError(f"unknown session {echo(session)}{f' in run {echo(run)}' if run else ''}. "
                             f"Available sessions: {_list(avail)}")
    else:
        chosen, seen = [], set()
        for s in found:  # discover(): within a run, newest session first
            if s.run not in seen:
                seen.add(s.run)
                chosen.append(s)
            elif left is not None:
                left.append(s)
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
        raise InputError(f"unknown host {echo(', '.join(hosts or []))}. Available hosts: {_list(avail)}")
    return out


def _one_file(path: str, follow_symlinks: bool = False) -> tuple:
    """(Session, [HostFile]) of one profile file, or InputError saying which files are read."""
    from tb_gpu_advisor.runtime.advisor import expected_layouts, locate_file, why_not_read

    located = locate_file(path, follow_symlinks)
    if located is None:
        why = why_not_read(path)
        if why:  # a file named like a profile that its layout could not read: that, in words
            raise InputError(f"{path}: {why}")
        layouts = " or ".join(expected_layouts())
        raise InputError(f"{path}: not a profile this tool reads (it reads {layouts}, in a logdir)")
    _, session, host = located
    return session, [host]


def _json_dumps(obj: Any) -> str:
    """Strict JSON as ``Report.to_json`` writes it (no NaN/inf; numpy scalars converted; dataclasses as objects)."""
    from tb_gpu_advisor.common import jsonout
    from tb_gpu_advisor.model.schema import _json_default

    return jsonout.dumps(obj, indent=2, default=_json_default)


def _list(xs: Sequence[str], n: int = 30) -> str:
    """The first ``n`` names, each cut to ``fmt.MAX_ECHO_CHARS`` (names come from the logdir)."""
    return echo_list(xs, n)


# --------------------------------------------------------------------------- analysis


def _analyze(advisor: Advisor, session: Any, hosts: list, args: argparse.Namespace, stderr: TextIO) -> Any:
    """The Report of ``hosts`` of ``session`` (the report cache first)."""
    import dataclasses

    return session_report(advisor, dataclasses.replace(session, hosts=tuple(hosts)), stderr,
                          bool(getattr(args, "progress", False)))


def cli_options(args: argparse.Namespace) -> UserOptions:
    """The settings the command line gives, over the environment's (``cli.options.user_options``)."""
    return cli_opts.user_options(args)


def session_report(advisor: Advisor, session: Any, stderr: TextIO, progress: bool) -> Any:
    """A session's Report through the entry point (the report cache first) with the user's settings, with progress on
    ``stderr`` when asked or when it is a terminal, under the workers' memory limit; analysis failures become
    InputError (exit 2)."""
    from tb_gpu_advisor.runtime import guard

    name = session.stock_run
    show = _Progress(stderr, name) if progress or _isatty(stderr) else None
    try:
        # the plugin's worker memory and profile size limits, in this process (runtime/guard.py: one rule): a file
        # that needs more fails its own host with a clear error; the other hosts and sessions are still analysed
        with guard.analysis_limits():
            a = advisor.report(session, progress=show)
        if a.from_cache and show is not None:
            show("from the report cache", 1.0)
        return a.report
    except (OSError, ValueError) as e:
        raise InputError(f"cannot analyse {name}: {e}") from e
    except MemoryError:  # outside a host's analysis (its merge, the cache): the session fails, not the process
        raise InputError(f"cannot analyse {name}: {guard.out_of_memory_message()}") from None
    finally:
        if show is not None:
            show.done()


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
