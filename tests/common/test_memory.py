"""``common/memory.reuse_freed_heap``: after the PyTorch reader has run, freed column-sized arrays are reused, not
faulted in again.

Why: a 1 GB PyTorch ``report`` spent a third of its CPU in page faults (docs/benchmarks.md, issue #38), most of them
arrays written into pages that an array of the same size had just freed back to the kernel.  The check is the
kernel's own count of minor page faults (``getrusage``) over a loop of allocate-write-free, in a fresh process each
(glibc's thresholds move with what a process allocated before), with the policy and without it.
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys

import pytest

from tests.support.paths import REPO

#: Four columns of a 1 GB trace (2.7 M rows x 8 bytes each) allocated, written and freed, ten rounds: the page faults
#: of each round.
_PROBE = """
import json, resource, sys
import numpy as np
setup = sys.argv[1]
if setup == "policy":
    from tb_gpu_advisor.common.memory import reuse_freed_heap
    reuse_freed_heap()
elif setup == "reader":
    from tb_gpu_advisor.formats.kineto.parse import parse_trace
    parse_trace(sys.argv[2])
rounds = []
for _ in range(10):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    cols = [np.empty(21 << 17, np.float64) for _ in range(4)]
    for a in cols:
        a.fill(1.0)
    del a, cols
    rounds.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
print(json.dumps(rounds))
"""

pytestmark = pytest.mark.skipif(platform.system() != "Linux" or not platform.libc_ver()[0].startswith("glibc"),
                                reason="glibc's malloc only")


def _faults(*args: str) -> list[int]:
    out = subprocess.run([sys.executable, "-c", _PROBE, *args], cwd=REPO, capture_output=True, text=True,
                         check=True, timeout=120)
    return json.loads(out.stdout)


def _trace(tmp_path) -> str:
    events = [{"ph": "X", "name": "aten::mm", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 10 * i, "dur": 5}
              for i in range(50)]
    path = tmp_path / "w.1.pt.trace.json"
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": events}))
    return str(path)


def _refaults(rounds: list[int]) -> float:
    """Page faults of the rounds after the first, per fault of the first (which always writes fresh pages)."""
    return sum(rounds[1:]) / max(rounds[0], 1)


def test_freed_arrays_are_written_again_without_new_page_faults():
    """Under the defaults the heap's top (84 MB free) is trimmed at each round's last ``free``, so every round faults
    its pages in again; with the policy only the first round does."""
    default, kept = _faults("none"), _faults("policy")
    assert _refaults(default) > 4, default  # the probe measures what it should on this machine
    assert _refaults(kept) < 0.1, kept


def test_the_pytorch_reader_turns_it_on(tmp_path):
    assert _refaults(_faults("reader", _trace(tmp_path))) < 0.1
