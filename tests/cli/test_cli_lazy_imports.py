"""The CLI imports only the sub-command that runs (issue #30 item 3): ``report`` never pulls in ``diff``,
``precompute`` or the MCP server, and the top-level ``--help`` imports no sub-command module.  Which modules load is
asserted, never a time (benchmarks/cli_startup.py measures that)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import pytest

from tb_gpu_advisor.cli import main as cli
from tests.support.paths import REPO

SUBCOMMAND_MODULES = {name: module for name, module, _ in cli.COMMANDS}
SMALL = os.path.join(REPO, "tests", "fixtures", "wild", "amd_mi250")


def _modules_after(argv: list[str]) -> set[str]:
    """The ``tb_gpu_advisor`` modules (and numpy) a fresh interpreter has imported after ``main(argv)``."""
    code = ("import json, sys\nfrom tb_gpu_advisor.cli.main import main\n"
            "try:\n    main(json.loads(sys.argv[1]))\nexcept SystemExit:\n    pass\n"
            "sys.stderr.write('\\nMODULES ' + json.dumps(sorted(m for m in sys.modules "
            "if m.startswith(('tb_gpu_advisor', 'numpy', 'tensorflow')))))\n")
    env = dict(os.environ, TB_GPU_ADVISOR_CACHE_DIR="off")
    r = subprocess.run([sys.executable, "-c", code, json.dumps(argv)], cwd=REPO, env=env, capture_output=True,
                       text=True, timeout=300)
    return set(json.loads(r.stderr.rsplit("MODULES ", 1)[1]))


def test_top_level_help_imports_no_sub_command():
    mods = _modules_after(["--help"])
    assert not mods & set(SUBCOMMAND_MODULES.values())
    assert not any(m.startswith(("tb_gpu_advisor.runtime", "tb_gpu_advisor.report", "tb_gpu_advisor.serve",
                                 "tensorflow")) for m in mods)


@pytest.mark.parametrize("argv", [["report", "--help"], ["report", SMALL]], ids=["help", "small-file"])
def test_report_imports_only_report(argv):
    mods = _modules_after(argv)
    assert "tb_gpu_advisor.cli.report" in mods
    others = {m for name, m in SUBCOMMAND_MODULES.items() if name != "report"}
    assert not mods & others
    assert not any(m.startswith(("tb_gpu_advisor.serve", "tb_gpu_advisor.report.diff", "tensorflow")) for m in mods)


def test_each_command_runs_its_module_and_the_help_lines_are_the_modules():
    """The one-line help main lists for a command not imported is the line its module registers."""
    for name, module, help_line in cli.COMMANDS:
        parser = argparse.ArgumentParser()
        sub = parser.add_subparsers()
        __import__(module, fromlist=["add_parser"]).add_parser(sub)
        (action,) = [a for a in sub._choices_actions if a.dest == name]
        assert action.help == help_line, name
        args = cli.build_parser([name, "x", "y"]).parse_known_args([name, "x", "y"])[0]
        assert args.func.__module__ == module


def test_the_full_parser_and_the_lazy_one_parse_alike():
    argv = ["--debug", "report", "logs", "--run", "r", "--format", "json"]
    assert vars(cli.build_parser().parse_args(argv)) == vars(cli.build_parser(argv).parse_args(argv))
    assert cli.chosen_command(["--debug", "diff", "a"]) == "diff"
    assert cli.chosen_command(["--version"]) is None
