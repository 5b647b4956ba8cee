"""``tb-gpu-advisor`` command line: one sub-command per module.

Each sub-command lives in its own module exposing ``add_parser(subparsers)``
(which registers the sub-command and sets ``func``); this file only wires
them, so the CLI grows without this file knowing their options.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from tb_gpu_advisor import __version__

# sub-command modules, in the order ``--help`` lists them
_COMMANDS = ("cli_report", "cli_diff", "precompute")


#: Frameworks whose captures are analysed, when the framework registry cannot be imported.
_FRAMEWORKS = ("TensorFlow", "JAX", "PyTorch")


def supported_frameworks() -> tuple[str, ...]:
    """Display names of the supported frameworks (the framework registry's, so a new one shows up in --help)."""
    try:
        from tb_gpu_advisor.frameworks import REGISTRY
    except Exception:  # noqa: BLE001 - --help must work even if the registry is broken
        return _FRAMEWORKS
    names = tuple(f.name for f in REGISTRY.values() if getattr(f, "name", None))
    return names or _FRAMEWORKS


def and_list(names: tuple[str, ...]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tb-gpu-advisor",
        description=f"Check {and_list(supported_frameworks())} GPU profiles in a TensorBoard logdir "
                    "(<run>/plugins/profile/<session>/<host>.xplane.pb, <run>/<worker>.<time>.pt.trace.json[.gz]) "
                    "against the TensorFlow GPU performance guide.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMANDS:
        try:
            module = importlib.import_module(f"{__package__}.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"{__package__}.{name}":
                raise
            continue  # a sub-command not built yet in this checkout
        module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
