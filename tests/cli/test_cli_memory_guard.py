"""Issue #21 item 8: ``report`` runs under the plugin workers' memory limit (``runtime/guard.py``).

A host file whose analysis needs more than ``TB_GPU_ADVISOR_WORKER_MEMORY_MB`` fails alone, with a message that
names the limit and the variable that raises it; the session's other host is still analysed and reported, and
the exit code says a host failed (2).  Each case runs in a fresh process: the limit is on the process's address
space, so it is set there to what that process already uses plus a margin, below what the big file needs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from synthetic import hostile
from tb_gpu_advisor.formats.xplane.schema import message_class
from tests.support.paths import REPO

SESSION = "2024_01_01_00_00_00"
#: Address space the driver allows above what it uses after its imports: far more than the small capture's
#: analysis takes, far less than the big file's one plane.
MARGIN_MB = 48
BIG_PLANE_MB = 96

DRIVER = textwrap.dedent("""
    import os, sys
    from tb_gpu_advisor.cli import main as cli
    import tb_gpu_advisor.runtime.pipeline  # the analysis's modules, before the limit is measured
    with open("/proc/self/status") as f:
        vm_kb = next(int(line.split()[1]) for line in f if line.startswith("VmSize:"))
    os.environ["TB_GPU_ADVISOR_WORKER_MEMORY_MB"] = str(vm_kb // 1024 + int(sys.argv[2]))
    sys.exit(cli.main(["report", sys.argv[1], "--format", "json"]))
""")


def _big_capture() -> bytes:
    """A valid small capture plus one GPU plane carrying a ``BIG_PLANE_MB`` bytes stat: reading that plane
    alone needs more than the margin (the reader holds a plane's bytes while it decodes it)."""
    space = message_class("XSpace").FromString(hostile.seed_capture())
    plane = space.planes.add(id=99, name="/device:GPU:7")
    entry = plane.stat_metadata.add(key=1)
    entry.value.id, entry.value.name = 1, "blob"
    plane.stats.add(metadata_id=1, bytes_value=b"\x01" * (BIG_PLANE_MB << 20))
    return space.SerializeToString()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc/self/status are Linux's")
def test_report_refuses_the_file_over_the_worker_limit_and_reports_the_rest(tmp_path):
    hostile.write_capture(tmp_path, ".", hostile.seed_capture(), host="small")
    hostile.write_capture(tmp_path, ".", _big_capture(), host="big")
    # the size limit set high: the big file must reach the memory limit, not be refused by its size first (since
    # issue #39 the command line reads profiles up to half its memory limit, as the tab's workers do)
    env = dict(os.environ, TB_GPU_ADVISOR_CACHE_DIR="off", PYTHONPATH=str(REPO),
               TB_GPU_ADVISOR_MAX_PROFILE_BYTES=str(8 << 30))
    out = subprocess.run([sys.executable, "-c", DRIVER, str(tmp_path), str(MARGIN_MB)], capture_output=True,
                         text=True, timeout=300, env=env, cwd=str(REPO), check=False)
    assert out.returncode == 2, out.stderr[-2000:]
    hosts = {h["host"]: h for r in json.loads(out.stdout)["reports"] for h in r["hosts"]}
    assert hosts["small"]["error"] is None and hosts["small"]["gpus"], hosts["small"]
    why = hosts["big"]["error"]
    assert why.startswith("ran out of memory (worker limit ") and "TB_GPU_ADVISOR_WORKER_MEMORY_MB" in why, why
    assert "host 'big' could not be analysed: ran out of memory" in out.stderr
    assert "Traceback" not in out.stderr


def test_the_limit_is_lifted_after_the_analysis():
    """The CLI lowers only its soft limit, for the analysis: rendering and the next command see the old one."""
    resource = pytest.importorskip("resource")
    from tb_gpu_advisor.runtime import guard

    before = resource.getrlimit(resource.RLIMIT_AS)
    with guard.address_space_limit(64 << 30):
        inside = resource.getrlimit(resource.RLIMIT_AS)
    assert resource.getrlimit(resource.RLIMIT_AS) == before
    assert inside[1] == before[1] and (before[0] == resource.RLIM_INFINITY or inside[0] <= before[0])
    assert inside[0] == min(64 << 30, before[0] if before[0] != resource.RLIM_INFINITY else 64 << 30)
