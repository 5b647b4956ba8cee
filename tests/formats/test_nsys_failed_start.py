"""An Nsight export of a program that died at start-up: no event, but the program's own standard error, which the
export keeps (``ProcessStreams``), says why.  The error names that cause instead of guessing at the window.

The real file is amir-ghz/DynamicViT's ``nsys_profile.sqlite`` (``tests/fixtures/nsys_windows/SOURCE.md``): Python
failed to load Nsight's injection library (``symbol lookup error ... libToolsInjectionProxy64.so: undefined symbol:
__libc_dlclose``), read off the file with sqlite3 before the Advisor ran.  The copies in ``tmp_path`` carry a planted
message, or none, so what the error quotes is known by construction."""

from __future__ import annotations

import shutil
import sqlite3

import pytest

from tb_gpu_advisor.formats.nsys import reader
from tb_gpu_advisor.formats.nsys.tables import NsysReadError
from tests.support.paths import FIXTURES

FAILED = FIXTURES / "nsys_windows" / "failed_start_dynamicvit.sqlite"


def _stderr_ids(path):
    con = sqlite3.connect(path)
    try:
        return con.execute("SELECT p.contentId FROM ProcessStreams p JOIN StringIds f ON f.id = p.filenameId "
                           "WHERE f.value LIKE '%stderr%'").fetchall()
    finally:
        con.close()


def test_a_program_that_died_at_start_up_is_named_by_its_own_error():
    with pytest.raises(NsysReadError) as e:
        reader.read_trace(str(FAILED))
    msg = str(e.value)
    assert "symbol lookup error" in msg and "libToolsInjectionProxy64.so" in msg
    assert "stopped before it ran any work" in msg
    assert "was the profiler stopped" not in msg  # the guess gives way to the program's own words


def _with_stderr(tmp_path, text):
    p = tmp_path / "copy.sqlite"
    shutil.copy(FAILED, p)
    (cid,), = _stderr_ids(p)
    con = sqlite3.connect(p)
    con.execute("UPDATE StringIds SET value = ? WHERE id = ?", (text, cid))
    con.commit()
    con.close()
    return p


def test_the_last_line_of_the_planted_error_is_quoted(tmp_path):
    p = _with_stderr(tmp_path, "loading model\nTraceback (most recent call last):\n  ...\n"
                               "RuntimeError: CUDA error: no kernel image is available\n\n")
    with pytest.raises(NsysReadError, match=r'"RuntimeError: CUDA error: no kernel image is available"'):
        reader.read_trace(str(p))


def test_without_an_error_the_window_is_still_asked_about(tmp_path):
    p = _with_stderr(tmp_path, "   \n")
    with pytest.raises(NsysReadError) as e:
        reader.read_trace(str(p))
    assert str(e.value) == reader.NOTHING_RECORDED
