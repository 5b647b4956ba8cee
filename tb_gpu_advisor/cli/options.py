"""The options every sub-command shares, defined once (``report``, ``diff``, ``precompute``, ``mcp``).

Each sub-command adds the groups it takes with one call (:func:`add_settings`, :func:`add_cache_dir`,
:func:`add_follow_symlinks`), so an option reads, parses and is checked the same everywhere: the three settings
come from ``common.options.settings_spec`` (the same definition TensorBoard's flags and the tab's Settings read),
``--params`` is a positive whole number and the other two positive finite numbers in every sub-command, and
``--cache-dir off`` means no cache, as ``TB_GPU_ADVISOR_CACHE_DIR=off`` does.  :func:`advisor` builds the
one entry point (``runtime.advisor.Advisor``) from them.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import sys
import textwrap
from collections.abc import Iterator
from typing import TYPE_CHECKING

from tb_gpu_advisor.common.options import UserOptions, settings_spec

if TYPE_CHECKING:  # imported when an Advisor is built: --help and the top level import no analysis (issue #30)
    from tb_gpu_advisor.runtime.advisor import Advisor

#: The supported frameworks' display names as ``frameworks.display_names()`` gives them, for the help texts: that
#: registry imports numpy and every framework module, which ``--help`` must not wait for (issue #30); a test holds the
#: two equal (``tests/cli/test_cli_lazy_imports.py``).
FRAMEWORK_NAMES = ("TensorFlow", "JAX", "PyTorch")
#: How a user of the command line has symlinks inside the logdir followed (named in "nothing found" messages).
FOLLOW_FLAG = "--follow-symlinks"
CACHE_HELP = ("report cache folder (default: $TB_GPU_ADVISOR_CACHE_DIR, else $XDG_CACHE_HOME/tb-gpu-advisor or "
              "~/.cache/tb-gpu-advisor; 'off': no cache, as TB_GPU_ADVISOR_CACHE_DIR=off); shared by report, diff, "
              "precompute, mcp and the tab")
FOLLOW_HELP = ("follow symlinks inside LOGDIR (a run folder or a profile linked from elsewhere in the logdir); off by "
               "default. A symlink leading out of LOGDIR is never followed, and a link swapped in after the listing "
               "is never read")


class HelpFormatter(argparse.HelpFormatter):
    """``--help`` wrapped only at spaces: never inside a path, a command or an option (argparse's default breaks
    ``tb-gpu-advisor`` after ``tb-`` and long paths anywhere).  A description or epilog keeps its line breaks, and
    a line that starts with spaces (a command, a JSON configuration) is printed as it is."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        return wrap(self._whitespace_matcher.sub(" ", text).strip(), width) or [""]

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        out = []
        for line in text.splitlines():
            if line[:1].isspace() or not line.strip():
                out.append(indent + line if line.strip() else "")
            else:
                out.extend(wrap(line.strip(), width, indent))
        return "\n".join(out)


def wrap(text: str, width: int, indent: str = "", subsequent: str | None = None) -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken only at spaces (a longer word stands alone)."""
    return textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=indent if subsequent is None else subsequent,
                         break_long_words=False, break_on_hyphens=False)


_DEST = {"params": "params", "net_gbps": "net_gbps", "model_flops": "model_flops_per_step"}


def add_settings(p: argparse.ArgumentParser) -> None:
    """``--params``, ``--net-gbps``, ``--model-flops-per-step``: the user's settings, part of every cache key."""
    for s in settings_spec():
        p.add_argument(s.option, dest=_DEST[s.key], type=s.arg_type, default=None,
                       metavar=s.metavar, help=f"{s.help} Unset: {s.unset}. Part of the report cache key.")


def add_cache_dir(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cache-dir", default=None, metavar="DIR", help=CACHE_HELP)


def add_follow_symlinks(p: argparse.ArgumentParser) -> None:
    p.add_argument(FOLLOW_FLAG, dest="follow_symlinks", action="store_true", help=FOLLOW_HELP)


def add_common(p: argparse.ArgumentParser) -> None:
    """The settings, the cache folder and following symlinks: what every sub-command that reads a logdir takes."""
    add_settings(p)
    add_cache_dir(p)
    add_follow_symlinks(p)


def non_negative_int(text: str) -> int:
    """A whole number >= 0 (``--top``, ``--evidence``), also written 1_000, 1,000 or 1e3."""
    t = text.replace("_", "").replace(",", "").strip()
    try:
        v = float(t) if not t.lstrip("-").isdigit() else int(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text[:40]!r}") from None
    if v != v or v in (float("inf"), float("-inf")) or not float(v).is_integer() or v < 0:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 0, got {text[:40]!r}")
    return int(v)


def user_options(args: argparse.Namespace) -> UserOptions:
    """The settings the command line gives, over the environment's (where ``cli.main`` also leaves them for
    precompute's workers): the value precompute and the tab key their reports with, so each finds the others'."""
    given = UserOptions(params=getattr(args, "params", None), net_gbps=getattr(args, "net_gbps", None),
                        model_flops=getattr(args, "model_flops_per_step", None))
    return UserOptions.from_env().overridden_by(given)


#: The module whose import brings in the analysis: the pipeline's stages, about 110 modules.
_ENTRY_POINT = "tb_gpu_advisor.runtime.advisor"


@contextlib.contextmanager
def _uncollected() -> Iterator[None]:
    """Run the block (the analysis' first import) with the cyclic garbage collector paused, then keep every object
    alive at its end out of the collector's sight (``gc.freeze``).

    Why: importing the analysis creates ~35,000 objects (functions, classes and their dicts) that live as long as the
    process.  At the default thresholds the collector ran ~50 times over them while they were made, freeing none, and
    later collections went over them again: ~8 ms of the ~0.25 s CPU of a small ``report`` (issue #38).  Frozen,
    they are never traversed; one of them that died in a reference cycle would never be freed, and module objects
    do not die.  A collector someone turned off stays off.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def advisor(args: argparse.Namespace, logdir: str | None = None) -> "Advisor":
    """The entry point over ``logdir`` (default: ``args.logdir``) with the command line's settings, cache folder and
    symlink choice."""
    if _ENTRY_POINT in sys.modules:
        from tb_gpu_advisor.runtime.advisor import Advisor
    else:
        with _uncollected():
            from tb_gpu_advisor.runtime.advisor import Advisor

    return Advisor(logdir if logdir is not None else args.logdir, cache=getattr(args, "cache_dir", None),
                   options=user_options(args), follow_symlinks=bool(getattr(args, "follow_symlinks", False)))
