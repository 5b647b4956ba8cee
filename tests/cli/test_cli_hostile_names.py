"""Hostile names are echoed cut, in the CLI and the MCP server's errors (issue 27 item 16).

Before: ``report LOGDIR --run <100,000 characters>`` printed a 100,067-character error; the MCP server's
``unknown run`` error carried the whole name too.  Now each name is cut to ``fmt.MAX_ECHO_CHARS`` with its length.
"""

from __future__ import annotations

import io

import pytest

from tb_gpu_advisor.cli import main as cli
from tb_gpu_advisor.common.fmt import MAX_ECHO_CHARS, clip, echo, echo_list
from tests.support.profile_files import write_profile

LONG = "a" * 100_000
SESSION = "2026_01_01_00_00_00"


def _report(*argv: str) -> tuple[int, str, str]:
    args = cli.build_parser().parse_args(["report", *argv])
    out, err = io.StringIO(), io.StringIO()
    return args.func(args, stdout=out, stderr=err), out.getvalue(), err.getvalue()


@pytest.fixture
def logdir(tmp_path):
    write_profile(str(tmp_path), "run1", SESSION, "w0")
    return str(tmp_path)


@pytest.mark.parametrize("flag", ["--run", "--session", "--host"])
def test_an_unknown_100k_name_is_echoed_cut(logdir, flag):
    code, out, err = _report(logdir, "--cache-dir", "off", flag, LONG)
    assert code == 2 and out == ""
    assert "(100,000 characters)" in err and LONG[: MAX_ECHO_CHARS + 1] not in err
    assert len(err) < 600, len(err)
    assert "run1" in err or "w0" in err or SESSION in err  # the choices are still named


def test_the_helpers_cut_and_say_how_long():
    assert clip("abc") == "abc" and echo("abc") == "'abc'"
    assert echo("x" * 201) == repr("x" * 200) + "… (201 characters)"
    assert clip("x" * 201, 10) == "x" * 10 + "… (201 characters)"
    assert echo_list(["a", "b" * 300, "c"], n=2) == "a, " + "b" * 200 + "… (300 characters) ... (1 more)"


def test_the_mcp_servers_errors_cut_names(logdir):
    from tb_gpu_advisor.serve.mcp_server import Advisor, ToolInputError

    advisor = Advisor(logdir)
    try:
        for kwargs in ({"run": LONG}, {"run": "run1", "session": LONG}, {"run": "run1", "host": LONG}):
            with pytest.raises(ToolInputError) as e:
                advisor.select(**kwargs)
            assert "(100,000 characters)" in str(e.value) and len(str(e.value)) < 600, str(e.value)[:300]
    finally:
        advisor.shutdown()
