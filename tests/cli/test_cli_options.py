"""The options every sub-command shares are defined once (issue 27 item 18).

Before: ``report``, ``diff``, ``precompute`` and ``mcp`` each defined their own, and they had drifted -- ``--params``
a positive whole number in two, any ``int`` in two (``diff --params 0`` and ``precompute --params -3`` were taken),
``mcp`` without ``--model-flops-per-step`` nor ``diff`` ``--net-gbps``, and ``--cache-dir off`` made a folder named
``off`` where ``TB_GPU_ADVISOR_CACHE_DIR=off`` means no cache.  Now ``cli/options.py`` defines them, from the settings'
one definition (``common.options.settings_spec``) that TensorBoard's flags and the tab also read.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout

import pytest

from tb_gpu_advisor.cli.main import build_parser, main
from tb_gpu_advisor.common.options import settings_spec
from tb_gpu_advisor.serve.plugin_entry import GpuAdvisorLoader
from tests.support.paths import DEMO_LOGS, REPO

COMMANDS = ("report", "diff", "precompute", "mcp")
SHARED = ("--params", "--net-gbps", "--model-flops-per-step", "--cache-dir", "--follow-symlinks")


def _options(command: str) -> dict[str, argparse.Action]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    return {o: a for a in sub._actions for o in a.option_strings}


def _argv(command: str, *extra: str) -> list[str]:
    return [command, "LOGDIR", *(["--base", "a", "--new", "b"] if command == "diff" else []), *extra]


def test_every_sub_command_takes_the_shared_options_as_one_definition():
    seen = {}
    for command in COMMANDS:
        options = _options(command)
        missing = [o for o in SHARED if o not in options]
        assert not missing, f"{command} lacks {missing}"
        seen[command] = {o: (options[o].dest, options[o].type, options[o].metavar, options[o].help) for o in SHARED}
    first = seen[COMMANDS[0]]
    assert all(v == first for v in seen.values()), {c: v for c, v in seen.items() if v != first}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("option, value", [("--params", "0"), ("--params", "-3"), ("--params", "1.5"),
                                           ("--net-gbps", "0"), ("--net-gbps", "nan"),
                                           ("--model-flops-per-step", "inf"), ("--model-flops-per-step", "-1e12")])
def test_a_bad_setting_is_a_usage_error_in_every_sub_command(command, option, value):
    err = io.StringIO()
    with redirect_stderr(err), pytest.raises(SystemExit) as e:
        build_parser().parse_args(_argv(command, option, value))
    assert e.value.code == 2 and option in err.getvalue(), err.getvalue()


@pytest.mark.parametrize("command", COMMANDS)
def test_good_settings_parse_alike_in_every_sub_command(command):
    args = build_parser().parse_args(_argv(command, "--params", "110,000,000", "--net-gbps", "50",
                                           "--model-flops-per-step", "6e12", "--follow-symlinks"))
    assert (args.params, args.net_gbps, args.model_flops_per_step, args.follow_symlinks) == (110_000_000, 50.0,
                                                                                             6e12, True)


def test_the_tensorboard_flags_and_the_cli_options_share_the_settings_definition():
    parser = argparse.ArgumentParser()
    GpuAdvisorLoader().define_flags(parser)
    flags = {o: a for a in parser._actions for o in a.option_strings}
    options = _options("report")
    for s in settings_spec():
        assert s.help in flags[s.flag].help and s.help in options[s.option].help
    assert "--gpu_advisor_follow_symlinks" in flags and flags["--gpu_advisor_follow_symlinks"].default is False


def test_cache_dir_off_means_no_cache(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env_cache = tmp_path / "env-cache"
    monkeypatch.setenv("TB_GPU_ADVISOR_CACHE_DIR", str(env_cache))
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        assert main(["report", str(DEMO_LOGS), "--run", "ideal", "--cache-dir", "off"]) == 0
    assert "Healthy" in out.getvalue()
    assert not (tmp_path / "off").exists(), "--cache-dir off made a folder named off"
    assert not env_cache.exists() or not any(env_cache.iterdir()), "--cache-dir off still cached"
    err = io.StringIO()
    with redirect_stderr(err):
        assert main(["precompute", str(DEMO_LOGS), "--cache-dir", "off"]) == 2
    assert "cache is disabled" in err.getvalue()


@pytest.mark.parametrize("command", ("", *COMMANDS))
def test_help_wraps_only_at_spaces(command):
    """Never inside a path, a command or an option (was: "tb-" / "gpu-advisor" and "$XDG_CACHE_HOME/tb-" /
    "gpu-advisor" split over two lines, and the MCP configuration cut inside "tb-gpu-advisor")."""
    env = dict(os.environ, COLUMNS="72")
    text = subprocess.run([sys.executable, "-m", "tb_gpu_advisor.cli", *([command] if command else []), "--help"],
                          cwd=str(REPO), env=env, capture_output=True, text=True, check=True).stdout
    lines = text.splitlines()
    assert not [ln for ln in lines if re.search(r"[A-Za-z]-$", ln)], [ln for ln in lines if ln.endswith("-")]
    if command == "mcp":
        assert '{"gpu-advisor": {"command": "tb-gpu-advisor", "args": ["mcp", "/path/to/logdir"]}}' in text
    if command == "report":
        assert "~/.cache/tb-gpu-advisor;" in text
