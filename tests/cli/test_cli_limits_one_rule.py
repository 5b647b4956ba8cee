"""Issue #39, deliverable 8: the command line's default limits are the server's rule (``runtime/guard.py``).

Before: ``report`` let an analysis take half the machine (2-32 GiB) and read profiles up to 8 GiB, so a 17.8 MB
hostile file could use 8.5 GB there while the tab refused it at 2-4 GiB.  Now every analysis -- ``report``, ``diff``,
``precompute``, the tab, the MCP server -- gets a quarter of the memory (2-4 GiB) and profiles up to half that.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil

import pytest

from tb_gpu_advisor.cli import main as cli
from tb_gpu_advisor.formats import base as formats_base
from tb_gpu_advisor.runtime import guard, isolation
from tests.support.paths import REPO

DEMO = REPO / "demo_logs" / "input_bound"
GiB = 1 << 30


@pytest.fixture
def no_address_limit(monkeypatch):
    """The limits the command line asks for, recorded; this test process's own address space left alone."""
    asked = []

    @contextlib.contextmanager
    def record(memory_bytes):
        asked.append(memory_bytes)
        yield

    monkeypatch.setattr(guard, "address_space_limit", record)
    monkeypatch.delenv(formats_base.ENV_MAX_BYTES, raising=False)
    return asked


def test_the_command_lines_limits_are_the_servers(monkeypatch, no_address_limit):
    monkeypatch.delenv(guard.ENV_MEMORY, raising=False)
    server = isolation.Limits.from_env()
    with guard.analysis_limits() as memory:
        assert memory == server.memory_bytes
        assert formats_base.max_profile_bytes() == server.profile_bytes == memory // 2
    assert no_address_limit == [server.memory_bytes]
    assert formats_base.ENV_MAX_BYTES not in os.environ  # restored: the variable was not the user's


@pytest.mark.skipif(not DEMO.is_dir(), reason="demo_logs/ missing")
def test_report_refuses_a_profile_over_half_its_memory_limit(tmp_path, monkeypatch, no_address_limit):
    """A 45 kB capture under a 80 kB memory limit: over the profile limit (half), refused before it is read, as a
    worker of the tab refuses it.  (On main the command line read up to 8 GiB whatever its memory limit.)"""
    shutil.copytree(DEMO, tmp_path / "input_bound")
    monkeypatch.setenv(guard.ENV_MEMORY, "0.08")  # 83,886 bytes: profiles up to 41,943
    monkeypatch.setenv("TB_GPU_ADVISOR_CACHE_DIR", "off")
    args = cli.build_parser().parse_args(["report", str(tmp_path), "--format", "json"])
    out = io.StringIO()
    code = args.func(args, stdout=out, stderr=io.StringIO())
    doc = json.loads(out.getvalue())
    (host,) = [h for r in doc.get("reports", [doc]) for h in r["hosts"]]
    assert code == 2 and host["error"] and formats_base.ENV_MAX_BYTES in host["error"], (code, host["error"])
    assert no_address_limit == [int(0.08 * (1 << 20))]
