"""``tb-gpu-advisor`` command line: one sub-command per module.

Each sub-command lives in its own module exposing ``add_parser(subparsers)``
(which registers the sub-command and sets ``func``); this file only wires
them, so the CLI grows without this file knowing their options.
"""

from __future__ import annotations

import argparse
import os
import sys

from tb_gpu_advisor import __version__
from tb_gpu_advisor.cli import diff, mcp, precompute, report
from tb_gpu_advisor.common import logs
from tb_gpu_advisor.common.fmt import and_list
from tb_gpu_advisor.frameworks import display_names
from tb_gpu_advisor.common.thresholds import ENV_MODEL_FLOPS, ENV_NET_GBPS

#: Sub-command modules, in the order ``--help`` lists them.
_COMMANDS = (report, diff, precompute, mcp)
DEBUG_HELP = ("log every step on stderr, with the traceback of anything that failed (a check that could not run, "
              "a cache entry that could not be read); without it, each is one line")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tb-gpu-advisor",
        description=f"Check {and_list(display_names())} GPU profiles in a TensorBoard logdir "
                    "(<run>/plugins/profile/<session>/<host>.xplane.pb, <run>/<worker>.<time>.pt.trace.json[.gz]) "
                    "against the TensorFlow GPU performance guide.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("--debug", action="store_true", help=DEBUG_HELP)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in _COMMANDS:
        module.add_parser(sub)
    for p in sub.choices.values():  # also after the sub-command (SUPPRESS: absent there, the top level's stands)
        p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=DEBUG_HELP)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    logs.configure(debug=bool(getattr(args, "debug", False)))
    net = getattr(args, "net_gbps", None)
    if net is not None:
        if not net > 0:
            parser.error("--net-gbps: must be a positive number of GB/s")
        # an environment variable, so the worker processes that merge sessions (precompute) see it too
        os.environ[ENV_NET_GBPS] = repr(float(net))
    flops = getattr(args, "model_flops_per_step", None)
    if flops is not None:
        if not (flops > 0 and flops != float("inf")):
            parser.error("--model-flops-per-step: must be a positive number of FLOPs")
        os.environ[ENV_MODEL_FLOPS] = repr(float(flops))
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
