"""``tb-gpu-advisor`` command line: one sub-command per module.

Each sub-command lives in its own module exposing ``add_parser(subparsers)``
(which registers the sub-command and sets ``func``); this file only wires
them, so the CLI grows without this file knowing their options.

Only the sub-command that runs is imported (issue #30): ``report`` never imports ``diff``, ``precompute`` or the
MCP server, and ``--help`` imports none of them.  The others are listed with their one-line help from
``COMMANDS`` (a test holds each line to the one its module registers).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from tb_gpu_advisor import __version__
from tb_gpu_advisor.cli import options as cli_opts
from tb_gpu_advisor.common import logs
from tb_gpu_advisor.common.cachedir import ENV_DIR
from tb_gpu_advisor.common.dependencies import missing_dependency
from tb_gpu_advisor.common.fmt import and_list
from tb_gpu_advisor.common.thresholds import ENV_MODEL_FLOPS, ENV_NET_GBPS

#: Sub-commands in the order ``--help`` lists them: (name, module, the one-line help its ``add_parser`` registers).
COMMANDS = (
    ("report", "tb_gpu_advisor.cli.report", "analyse GPU profiles in LOGDIR and print ranked findings"),
    ("diff", "tb_gpu_advisor.cli.diff",
     "compare two captures: step time with its noise, findings fixed/new, predicted vs realised saving"),
    ("precompute", "tb_gpu_advisor.cli.precompute", "analyse every profile session in LOGDIR into the report cache"),
    ("mcp", "tb_gpu_advisor.cli.mcp",
     "serve LOGDIR's reports, diffs and tables to an AI assistant (MCP server on stdio)"),
)
DEBUG_HELP = ("log every step on stderr, with the traceback of anything that failed (a check that could not run, "
              "a cache entry that could not be read); without it, each is one line")


def description() -> str:
    """The top-level parser's description: the supported frameworks (``cli.options.FRAMEWORK_NAMES``) and layouts."""
    return (f"Check {and_list(cli_opts.FRAMEWORK_NAMES)} GPU profiles in a TensorBoard logdir "
            "(<run>/plugins/profile/<session>/<host>.xplane.pb, <run>/<worker>.<time>.pt.trace.json[.gz], "
            "<run>/<report>.sqlite or .nsys-rep of Nsight Systems) "
            "against the TensorFlow GPU performance guide.")


def chosen_command(argv: Sequence[str]) -> str | None:
    """The sub-command ``argv`` names: its first word that is not an option (the top level's options take no
    value), or None."""
    for word in argv:
        if word == "--":
            return None
        if not word.startswith("-"):
            return word
    return None


class _VersionAction(argparse.Action):
    """``--version``: the version and which XPlane, PyTorch JSON, memory snapshot and Nsight Systems readers run
    (compiled or pure Python, issue #38), looked up only when asked, so building the parser imports nothing more."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        from tb_gpu_advisor.formats.kineto.compiled import describe as kineto
        from tb_gpu_advisor.formats.nsys.compiled import describe as nsys
        from tb_gpu_advisor.formats.snapshot.compiled import describe as snapshot
        from tb_gpu_advisor.formats.xplane.compiled import describe

        print(f"{parser.prog} {__version__}\n{describe()}\n{kineto()}\n{snapshot()}\n{nsys()}")
        parser.exit()


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser.  With ``argv``, only the sub-command it names is imported and registered in full (the others
    by name and help line); without, every one is."""
    wanted = None if argv is None else chosen_command(argv)
    parser = argparse.ArgumentParser(prog="tb-gpu-advisor", description=description(),
                                     formatter_class=cli_opts.HelpFormatter)
    parser.add_argument("--version", action=_VersionAction, nargs=0, help="show the version and the XPlane decoder that runs, and exit")
    parser.add_argument("--debug", action="store_true", help=DEBUG_HELP)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module, help_line in COMMANDS:
        if argv is None or name == wanted:
            importlib.import_module(module).add_parser(sub)
        else:
            sub.add_parser(name, help=help_line, add_help=False)
    for p in sub.choices.values():  # also after the sub-command (SUPPRESS: absent there, the top level's stands)
        p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=DEBUG_HELP)
        p.formatter_class = cli_opts.HelpFormatter  # wrapped at spaces only, never inside a path or a command
    return parser


#: OpenBLAS's thread count, read once when numpy loads it; the analysis multiplies no matrices (issue #38).
BLAS_THREADS_ENV = "OPENBLAS_NUM_THREADS"


def one_blas_thread() -> None:
    """Ask numpy's OpenBLAS for no worker threads, unless the user chose a count: call before numpy is imported.

    Why: OpenBLAS starts a worker thread per core beyond the first when numpy loads, and they spin on the CPU for a
    while waiting for work the analysis never gives them (no matrix products).  On 2 idle cores ``report`` of a
    263 kB capture took 0.39 s of CPU with them and 0.29 s without, at the same wall time (issue #38,
    docs/benchmarks.md); on a busy machine the spinning thread gets no core and costs nothing.  Worker processes
    (the sessions' pool, ``precompute``) inherit the setting.
    """
    os.environ.setdefault(BLAS_THREADS_ENV, "1")


def main(argv: list[str] | None = None) -> int:
    """Run the sub-command ``argv`` names; a dependency this Python lacks is said as what to install (exit 2)."""
    one_blas_thread()  # before any sub-command imports numpy
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        return _run(argv)
    except ImportError as e:  # numpy or protobuf missing from this Python: its name and the pip command, no traceback
        missing = missing_dependency(f"tb-gpu-advisor {chosen_command(argv) or ''}".rstrip(), e)
        if missing is None:
            raise
        print(f"tb-gpu-advisor: error: {missing}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        if not _stdout_closed():
            raise  # a pipe of the command's own (a worker's, a socket's): a fault, with its traceback
        _discard_stdout()
        return EXIT_CLOSED_PIPE


#: The exit status of a command whose reader closed its output early (``report ... | head``): a process the shell's
#: SIGPIPE ended shows 128 + 13, as ``set -o pipefail`` reads it.
EXIT_CLOSED_PIPE = 128 + 13


def _stdout_closed() -> bool:
    """Whether standard output is a pipe its reader closed (``poll`` reports an error on its write end).

    Why: ``report LOGDIR --format json | head -c 100`` wrote into a pipe ``head`` had closed and died with a
    BrokenPipeError traceback (h37-review64); the reader having gone is no fault of the command's.  Asked of the
    stream, not of the exception, so a broken pipe of the command's own still shows its traceback."""
    try:
        import select

        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(ev & select.POLLERR for _, ev in poller.poll(0))
    except (AttributeError, OSError, ValueError):  # no poll (Windows), no descriptor (a test's StringIO)
        return False


def _discard_stdout() -> None:
    """Point standard output at the null device, so the interpreter's last flush of what is still buffered for the
    closed pipe neither fails again nor prints "Exception ignored"."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _run(argv: list[str]) -> int:
    """:func:`main`'s work: parse ``argv`` (importing only its sub-command), set what the workers inherit, run it."""
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    logs.configure(debug=bool(getattr(args, "debug", False)))
    # the settings (checked by their argparse types, cli/options.py) also as environment variables, so the worker
    # processes that merge sessions (precompute) see them too
    for name, env in (("net_gbps", ENV_NET_GBPS), ("model_flops_per_step", ENV_MODEL_FLOPS)):
        if getattr(args, name, None) is not None:
            os.environ[env] = repr(float(getattr(args, name)))
    if getattr(args, "cache_dir", None):
        # the workers' reports and what a format keeps in the cache (an .nsys-rep's export) go there too; "off": none
        os.environ[ENV_DIR] = args.cache_dir
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
