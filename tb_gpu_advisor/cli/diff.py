"""``tb-gpu-advisor diff``: compare two captures (before/after a fix, or two commits in CI).

Usage::

    tb-gpu-advisor diff LOGDIR --base RUN[/SESSION] --new RUN[/SESSION]
    tb-gpu-advisor diff BASE_LOGDIR NEW_LOGDIR [--base RUN[/SESSION]] [--new RUN[/SESSION]]
    tb-gpu-advisor diff BASE.xplane.pb NEW.xplane.pb
        [--host H] [--format text|markdown|json] [--fail-on-regression PCT] [--fail-on-memory-regression PCT]
        [--output FILE]

A side is a run (its newest session), a ``RUN/SESSION`` as the stock Profile tab names it, a whole logdir
holding one run, or one ``<run>/plugins/profile/<session>/<host>.xplane.pb``.  Reports come from the report
cache when ``precompute``, the tab or an earlier diff stored them (``--cache-dir``; the same folder and key),
else they are analysed and stored: a diff of cached reports never reads a profile.

Exit codes:
  0  compared; no regression beyond the noise and ``--fail-on-regression`` (or no such option)
  1  the new step time is slower than the base by more than PCT % of the base AND beyond the noise; or, where both
     sides record the allocator, a GPU's peak allocated or reserved bytes grew by more than the memory gate's PCT %
     of the base (``--fail-on-memory-regression``, else ``--fail-on-regression``'s), one line each on stderr
  2  usage or input error: no such logdir/run/session/host, a profile that could not be analysed, or a side
     without a step time (nothing to compare); a memory snapshot is compared by memory, and is an error only beside
     a capture that records no memory
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from typing import Any, TextIO

from tb_gpu_advisor import formats
from tb_gpu_advisor.cli import options as cli_opts
from tb_gpu_advisor.cli.report import EXIT_INPUT, EXIT_OK, InputError, _list, select_sessions, session_report
from tb_gpu_advisor.common.fmt import echo
from tb_gpu_advisor.report import diff as diffmod
from tb_gpu_advisor.report import diff_render
from tb_gpu_advisor.runtime.advisor import locate_file

EXIT_REGRESSION = 1


def add_parser(subparsers: Any) -> None:
    """Register ``diff`` (called by cli.py)."""
    p = subparsers.add_parser(
        "diff",
        help="compare two captures: step time with its noise, findings fixed/new, predicted vs realised saving",
        description="Compare a new capture with a base capture: step time before and after with its per-step noise, "
        "the breakdown per category, headline metrics, findings fixed / new / still present, the saving each fixed "
        "finding predicted next to the realised change, kernel and op changes, per-GPU changes; where both record the "
        "allocator (memory snapshots, profile_memory traces) each GPU's memory and the bytes a fix predicted vs realised.",
        epilog="sides: RUN (newest session) or RUN/SESSION in LOGDIR; or two logdirs; or two profile files (.xplane.pb, .pt.trace.json[.gz], .sqlite, ...)\n"
        "exit codes: 0 no regression; 1 slower than --fail-on-regression PCT and beyond the noise, or a GPU's peak "
        "memory grew by more than the memory gate's PCT; 2 input error\n"
        "json: the diff document (docs/diff.md)",
    )
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="LOGDIR (with --base and --new), or BASE NEW: two logdirs or two profile files")
    p.add_argument("--base", metavar="RUN[/SESSION]", help="the base (before) run or session")
    p.add_argument("--new", metavar="RUN[/SESSION]", help="the new (after) run or session")
    p.add_argument("--host", metavar="H", help="compare this host (default: each session's slowest host)")
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text", help="output format (default text)")
    p.add_argument("--fail-on-regression", type=_percent, default=None, metavar="PCT",
                   help="exit 1 if the new step time is more than PCT %% slower than the base and beyond the noise, "
                   "or (where both sides record the allocator) a GPU's peak allocated or reserved memory grew by more "
                   "than PCT %% of the base")
    p.add_argument("--fail-on-memory-regression", type=_percent, default=None, metavar="PCT",
                   help="the memory gate's own threshold: exit 1 if a GPU's peak allocated or reserved memory grew by "
                   "more than PCT %% of the base (default: --fail-on-regression's PCT; alone, memory is gated and step "
                   "time is not)")
    cli_opts.add_common(p)
    p.add_argument("--top", type=cli_opts.non_negative_int, default=15, metavar="N",
                   help="kernel and op changes shown (default 15)")
    p.add_argument("--progress", action="store_true", help="print progress on stderr even when it is not a terminal")
    p.add_argument("--output", "-o", metavar="FILE", help="write the diff to FILE instead of stdout")
    p.set_defaults(func=run)


def _percent(s: str) -> float:
    try:
        v = float(s.rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a percentage: {s!r}") from None
    if not v >= 0 or v == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a percentage >= 0, got {s!r}")
    return v


@dataclass
class SideSpec:
    """Where one side comes from: a logdir and the run/session in it, or one host file."""

    logdir: str
    selector: str | None  # RUN or RUN/SESSION; None: the logdir's only run
    host: str | None = None  # set when the side is one .xplane.pb file
    label: str | None = None


def run(args: argparse.Namespace, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:

    stdout, stderr = stdout or sys.stdout, stderr or sys.stderr
    try:
        base_spec, new_spec = side_specs(args.paths, args.base, args.new, bool(getattr(args, "follow_symlinks", False)))
        base = load_report(base_spec, args, stderr)
        new = load_report(new_spec, args, stderr)
        # a side given as one .xplane.pb file holds that host only, whatever its name on the other side
        d = diffmod.diff_reports(base, new, host=args.host, base_label=base_spec.label, new_label=new_spec.label, top=args.top)
    except (InputError, diffmod.DiffError) as e:
        print(f"tb-gpu-advisor diff: error: {e}", file=stderr)
        return EXIT_INPUT
    text = diff_render.render(d, args.format)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        stdout.write(text)
        stdout.flush()
    errors = [f"{w}: {s.error}" for w, s in (("base", d.base), ("new", d.new)) if s.error]
    errors += [x for x in [diffmod.nothing_compared(d)] if x]  # a snapshot beside a trace without memory
    for e in errors:
        print(f"tb-gpu-advisor diff: error: {e}", file=stderr)
    if errors:
        return EXIT_INPUT
    step_pct = args.fail_on_regression
    memory_pct = args.fail_on_memory_regression if args.fail_on_memory_regression is not None else step_pct
    regressed = False
    if step_pct is not None and d.incomparable:
        # never a silent gate on different work: say so, and gate per TFLOP where both sides give FLOPs
        gate = ("memory alone (no step time on a side)" if d.step.verdict == "unknown" and d.memory else
                "step time per TFLOP" if d.per_tflop else "raw step time")
        print(f"tb-gpu-advisor diff: warning: the captures are not comparable ({'; '.join(d.incomparable)}); "
              f"the gate compares {gate}", file=stderr)
    if step_pct is not None and d.incomparable and d.per_tflop:
        share = d.per_tflop["delta_share"]
        if share * 100.0 > step_pct:
            print(f"tb-gpu-advisor diff: regression: step time per TFLOP {share * 100:+.1f}% "
                  f"(> {step_pct:g}%)", file=stderr)
            regressed = True
    elif step_pct is not None and d.regressed(step_pct):
        print(f"tb-gpu-advisor diff: regression: step time {d.step.delta_share * 100:+.1f}% "
              f"(> {step_pct:g}% and beyond the noise)", file=stderr)
        regressed = True
    if memory_pct is not None:  # where both sides record the allocator (snapshots, profile_memory traces)
        for line in d.memory_regressions(memory_pct):
            print(f"tb-gpu-advisor diff: regression: memory: {line}", file=stderr)
            regressed = True
    return EXIT_REGRESSION if regressed else EXIT_OK


# --------------------------------------------------------------------------- sides


def side_specs(paths: list[str], base: str | None, new: str | None,
               follow_symlinks: bool = False) -> tuple[SideSpec, SideSpec]:
    """The two sides from the positional paths and ``--base``/``--new`` (module doc)."""
    if len(paths) == 1:
        if not base or not new:
            raise InputError("with one LOGDIR, give both --base RUN[/SESSION] and --new RUN[/SESSION] "
                             "(or give two logdirs or two profile files)")
        return SideSpec(paths[0], base), SideSpec(paths[0], new)
    if len(paths) != 2:
        raise InputError(f"give one LOGDIR or two paths (base, new), got {len(paths)}")
    return _path_spec(paths[0], base, follow_symlinks), _path_spec(paths[1], new, follow_symlinks)


def _path_spec(path: str, selector: str | None, follow_symlinks: bool = False) -> SideSpec:
    """A logdir, or one host file of a format whose layout can place it (``<run>/plugins/profile/<session>/<host>.xplane.pb``)."""
    for fmt in formats.REGISTRY.values():
        located = fmt.layout.locate(path)
        if located is None:
            if fmt.layout.lone_host(os.path.basename(path)) and not os.path.isfile(path):
                raise InputError(f"{path}: no such file")
            continue
        if not os.path.isfile(path):
            raise InputError(f"{path}: no such file")
        return SideSpec(located.logdir, located.selector, host=located.host, label=path)
    if os.path.isfile(path):  # a file of a format that is placed by its folder only (a PyTorch trace), or alone
        if locate_file(path, follow_symlinks) is None:
            raise InputError(f"{path}: not a profile this tool reads")
        return SideSpec(path, None, label=path)  # the file as its own logdir (``select_sessions`` places it)
    return SideSpec(path, selector, label=None)


def _select(spec: SideSpec, advisor: Any) -> tuple[Any, list]:
    """(Session, [HostFile]) of a side: a run's newest session, RUN/SESSION, a session name, or the only run."""
    sel = spec.selector.rstrip("/") if spec.selector else None
    hosts = [spec.host] if spec.host else None
    if sel is None:
        chosen = select_sessions(advisor, None, None, hosts)
        if len(chosen) > 1:
            runs = [s.run for s, _ in chosen]
            raise InputError(f"{spec.logdir} holds {len(runs)} runs ({_list(runs)}): pick one with --base/--new")
        return chosen[0]
    try:  # RUN: its newest session
        return select_sessions(advisor, sel, None, hosts)[0]
    except InputError as run_error:
        if "unknown run" not in str(run_error):
            raise
        try:  # RUN/SESSION (the stock tab's name) or a session folder name
            return select_sessions(advisor, None, sel, hosts)[0]
        except InputError as session_error:
            raise InputError(f"{echo(sel)} is neither a run nor a session in {spec.logdir}. "
                             f"{str(run_error).split('. ', 1)[-1]}; {str(session_error).split('. ', 1)[-1]}") from None


def load_report(spec: SideSpec, args: argparse.Namespace, stderr: TextIO) -> Any:
    """The side's Report: from the cache when stored (the same key as precompute and the tab), else analysed
    and stored (``cli_report.session_report``)."""
    advisor = cli_opts.advisor(args, spec.logdir)
    session, _hosts = _select(spec, advisor)
    if spec.label is None:
        spec.label = session.stock_run
    return session_report(advisor, session, stderr, bool(args.progress))
