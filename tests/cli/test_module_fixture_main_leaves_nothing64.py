"""A command handler that a module-scoped fixture's in-process ``main`` installs is gone after the module's first
test, not left for the rest of the worker (fails on 33a36083).

Why: ``tests/conftest.py`` took off after each test only the command handlers the test itself added.  A module or
session fixture that runs ``main`` (``tests/model/test_schema_check.py`` writes its reports so) installs its handler
before the per-test fixture looks, so the handler stayed on the root logger, bound to a dead stderr, for every later
test of the worker; the CI of stop 98 failed when the next in-process ``main`` replaced it under the review62 check.
"""

from __future__ import annotations

import io
import logging

import pytest

from tb_gpu_advisor.common import logs


@pytest.fixture(scope="module")
def configured() -> logging.Handler:
    """What ``main`` does to the root logger, from a module-scoped fixture."""
    return logs.configure(stream=io.StringIO())


def test_a_module_fixture_runs_main(configured: logging.Handler) -> None:
    assert configured in logging.getLogger().handlers and logs.is_command_handler(configured)


def test_the_next_test_finds_no_command_handler() -> None:
    assert not [h for h in logging.getLogger().handlers if logs.is_command_handler(h)]
