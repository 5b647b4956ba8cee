"""The CLI imports only the sub-command that runs (issue #30 item 3): ``report`` never pulls in ``diff``,
``precompute`` or the MCP server, and the top-level ``--help`` imports no sub-command module; neither ``--help`` nor
``report --help`` imports numpy or any analysis; ``report`` of a PyTorch trace imports neither the Nsight tables and
exporter nor ``statistics`` or ``_strptime``; TensorBoard's loader of the tab imports no analysis.  Which modules load
is asserted, never a time (benchmarks/cli_startup.py measures that)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import pytest

from tb_gpu_advisor.cli import main as cli
from tb_gpu_advisor.runtime.parent_main import ENV as FORKSERVER_MAIN_ENV
from tests.support.paths import REPO

SUBCOMMAND_MODULES = {name: module for name, module, _ in cli.COMMANDS}
SMALL = os.path.join(REPO, "tests", "fixtures", "wild", "amd_mi250")
#: Standard-library modules the report of a small file no longer needs (each ~3-15 ms): the Nsight reader's (sqlite3),
#: the median's (statistics, with fractions; msgspec imports decimal itself) and the session-time parser's (_strptime).
STDLIB_WATCHED = {"sqlite3", "statistics", "fractions", "_strptime"}
#: What the help texts never wait for: numpy and every stage of the analysis.
ANALYSIS = ("numpy", "tb_gpu_advisor.model", "tb_gpu_advisor.devices", "tb_gpu_advisor.frameworks",
            "tb_gpu_advisor.formats", "tb_gpu_advisor.discover", "tb_gpu_advisor.steps", "tb_gpu_advisor.metrics",
            "tb_gpu_advisor.rules", "tb_gpu_advisor.report", "tb_gpu_advisor.runtime", "tb_gpu_advisor.serve")


def _modules_after(argv: list[str], watched: set[str] = STDLIB_WATCHED) -> set[str]:
    """The ``tb_gpu_advisor`` modules (and numpy, tensorflow, ``watched``) a fresh interpreter has imported
    after ``main(argv)``."""
    code = ("import json, sys\nfrom tb_gpu_advisor.cli.main import main\n"
            "try:\n    main(json.loads(sys.argv[1]))\nexcept SystemExit:\n    pass\n"
            "sys.stderr.write('\\nMODULES ' + json.dumps(sorted(m for m in sys.modules "
            f"if m.startswith(('tb_gpu_advisor', 'numpy', 'tensorflow')) or m in {sorted(watched)!r})))\n")
    env = dict(os.environ, TB_GPU_ADVISOR_CACHE_DIR="off")
    # set in this process by the analysis workers earlier tests started (its forkserver reads it): a user's shell has
    # none, and with it the child would prepare this process's main module (multiprocessing) at import
    env.pop(FORKSERVER_MAIN_ENV, None)
    r = subprocess.run([sys.executable, "-c", code, json.dumps(argv)], cwd=REPO, env=env, capture_output=True,
                       text=True, timeout=300)
    return set(json.loads(r.stderr.rsplit("MODULES ", 1)[1]))


def test_top_level_help_imports_no_sub_command():
    mods = _modules_after(["--help"])
    assert not mods & set(SUBCOMMAND_MODULES.values())
    assert not any(m.startswith(("tb_gpu_advisor.runtime", "tb_gpu_advisor.report", "tb_gpu_advisor.serve",
                                 "tensorflow")) for m in mods)


@pytest.mark.parametrize("argv", [["--help"], ["report", "--help"]], ids=["help", "report-help"])
def test_help_imports_no_analysis(argv):
    mods = _modules_after(argv)
    assert "tb_gpu_advisor.cli.main" in mods  # the run happened
    assert not sorted(m for m in mods if m.startswith(ANALYSIS)), "--help waits for the analysis"


def test_report_of_a_small_trace_imports_no_nsys_reader_statistics_or_strptime():
    mods = _modules_after(["report", SMALL])
    assert "tb_gpu_advisor.formats.kineto.parse" in mods and "numpy" in mods  # it analysed
    assert not mods & {"tb_gpu_advisor.formats.nsys.tables", "tb_gpu_advisor.formats.nsys.export",
                       "tb_gpu_advisor.formats.nsys.reader", "tb_gpu_advisor.formats.sqlite"}
    assert not mods & STDLIB_WATCHED


#: What ``report`` of an XPlane capture never uses (issue #38: start-up is what every report waits for): the other
#: formats' readers and their decoders; ``multiprocessing`` (the command line analyses in its own process); numpy's
#: random generators (the string hashes' seeds are splitmix64's, ``formats/xplane/wire.py``); ``hashlib`` (with the
#: report cache off nothing is hashed; numpy.random imported it too); msgspec (only JSON is written with it); XLA's HLO
#: reader (this TensorFlow capture holds no HLO).
OTHER_READERS = {"tb_gpu_advisor.formats.kineto.adapter", "tb_gpu_advisor.formats.kineto.parse",
                 "tb_gpu_advisor.formats.kineto.compiled", "tb_gpu_advisor.formats.nsys.reader",
                 "tb_gpu_advisor.formats.nsys.tables", "tb_gpu_advisor.formats.nsys.export", "tb_gpu_advisor.formats.sqlite",
                 "tb_gpu_advisor.formats.snapshot.reader", "tb_gpu_advisor.formats.snapshot.unpickle",
                 "tb_gpu_advisor.formats.snapshot.compiled", "tb_gpu_advisor.formats.rpd.reader",
                 "tb_gpu_advisor.formats.nvprof.reader", "tb_gpu_advisor.formats.nvprof.csv_reader",
                 "tb_gpu_advisor.formats.launch_links",
                 "tb_gpu_advisor.formats.rocprof.reader", "tb_gpu_advisor.formats.rocprof.rocpd_reader",
                 "tb_gpu_advisor.formats.rocprof.csv_reader", "tb_gpu_advisor.formats.rocprof.json_reader",
                 "tb_gpu_advisor.formats.staging"}
XPLANE_UNUSED = {"multiprocessing", "hashlib", "secrets", "numpy.random", "msgspec",
                 "tb_gpu_advisor.formats.xplane.hlo"}


@pytest.mark.parametrize("pure", [False, True], ids=["compiled-or-built", "pure-python"])
def test_an_xplane_report_imports_only_its_own_reader(pure, monkeypatch):
    """The XPlane report of a demo capture imports the XPlane reader alone (every format's layout is asked during
    discovery; no other reader), nor the modules it does not use."""
    from tb_gpu_advisor import formats
    from tb_gpu_advisor.formats.compiled import PURE_PYTHON_ENV

    monkeypatch.setenv(PURE_PYTHON_ENV, "1" if pure else "0")
    mods = _modules_after(["report", os.path.join(REPO, "demo_logs", "launch_bound")], XPLANE_UNUSED)
    assert "tb_gpu_advisor.formats.xplane.reader" in mods and "tb_gpu_advisor.report.render" in mods  # it analysed
    readers = {f.reader_module for f in formats.REGISTRY.values() if f.id != "xplane"}
    assert readers <= OTHER_READERS  # the list above names every other reader
    assert not mods & OTHER_READERS, "an XPlane report imported another format's reader"
    assert not mods & XPLANE_UNUSED


def test_the_help_lists_the_frameworks_of_the_registry():
    """The help's framework names are written out (the registry imports numpy); they are the registry's."""
    from tb_gpu_advisor.cli.options import FRAMEWORK_NAMES
    from tb_gpu_advisor.frameworks import display_names

    assert FRAMEWORK_NAMES == display_names()


def test_tensorboards_loader_imports_no_analysis():
    """TensorBoard imports the entry point and calls define_flags at start-up, for every user, tab opened or not."""
    code = ("import argparse, json, sys\nfrom tb_gpu_advisor.serve.plugin_entry import GpuAdvisorLoader\n"
            "GpuAdvisorLoader().define_flags(argparse.ArgumentParser())\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('tb_gpu_advisor', 'numpy')))))")
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300, check=True)
    mods = set(json.loads(r.stdout.splitlines()[-1]))
    assert "tb_gpu_advisor.serve.plugin_entry" in mods
    assert not sorted(m for m in mods if m.startswith(ANALYSIS) and m not in ("tb_gpu_advisor.serve",
                                                                               "tb_gpu_advisor.serve.plugin_entry"))


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


def _collector_after_report(disable_first: bool) -> dict:
    """The cyclic collector's state in a fresh interpreter after ``report`` of a demo capture."""
    code = ("import gc, json, os, sys\nfrom tb_gpu_advisor.cli.main import main\n"
            + ("gc.disable()\n" if disable_first else "")
            + "sys.stdout = open(os.devnull, 'w')\nmain(['report', sys.argv[1]])\n"
            "sys.stderr.write('\\nGC ' + json.dumps({'enabled': gc.isenabled(), 'frozen': gc.get_freeze_count(), "
            "'objects': len(gc.get_objects())}))\n")
    env = dict(os.environ, TB_GPU_ADVISOR_CACHE_DIR="off")
    env.pop(FORKSERVER_MAIN_ENV, None)  # as in _modules_after
    r = subprocess.run([sys.executable, "-c", code, os.path.join(REPO, "demo_logs", "launch_bound")], cwd=REPO,
                       env=env, capture_output=True, text=True, timeout=300)
    return json.loads(r.stderr.rsplit("GC ", 1)[1])


def test_the_analysis_is_imported_once_without_collections_and_kept_out_of_later_ones():
    """What importing the analysis creates (most of the objects a small report holds) is frozen: the collector, still
    on, never goes over it again (issue #38: its passes were ~5% of a small report's CPU)."""
    state = _collector_after_report(disable_first=False)
    assert state["enabled"]
    assert state["frozen"] > 10_000 and state["frozen"] > state["objects"]


def test_a_collector_turned_off_stays_off_and_nothing_is_frozen():
    state = _collector_after_report(disable_first=True)
    assert not state["enabled"] and state["frozen"] == 0
