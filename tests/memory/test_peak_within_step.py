"""A memory peak placed "N ms into step S" lies within step S of its own GPU (h37-left20).

The real TF 2.4 capture of 8 x V100 (``../shared/profiles/v100_bert_8gpu_tf24.xplane.pb``): one process drives GPU 4
and then GPU 6, their step 0 648 ms apart (each GPU's own ``Steps`` line: 1921.3 ms and 2568.9 ms).  GPU 6's
allocator peaks at 2587.2 ms (its ``MemoryAllocation`` events, on the host clock); main placed it "665.9 ms into step
0" of a 21.3 ms step, from the start of the host-wide window that spans both GPUs' steps.
"""

import copy
from types import SimpleNamespace as NS

import pytest

from tb_gpu_advisor.model.schema import HostReport
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.paths import SHARED_PROFILES
from tests.support.properties import memory_offset_problems

V100 = SHARED_PROFILES / "v100_bert_8gpu_tf24.xplane.pb"


@pytest.fixture(scope="module")
def v100() -> HostReport:
    if not V100.is_file():
        pytest.skip(f"{V100} not present")
    return analyze_host(NS(host="v100", path=str(V100)))


def test_the_peak_is_placed_in_its_own_gpus_step(v100):
    g6 = next(g for g in v100.gpus if g.gpu == 6)
    (row,) = [r for r in v100.step_rows if r.gpu == 6 and r.step == g6.memory["peak_step"]]
    # truth from the file: the peak's time less GPU 6's own step start (its Steps line), both on the viewer's base
    assert g6.memory["peak_step_offset_ms"] == pytest.approx(g6.memory["peak_ms"] - row.start_ms, abs=0.01)
    assert 0 <= g6.memory["peak_step_offset_ms"] <= row.step_ms
    assert g6.memory["peak_step_share"] == pytest.approx(g6.memory["peak_step_offset_ms"] / row.step_ms, abs=0.01)
    assert not memory_offset_problems(v100)


def test_the_checker_catches_an_offset_beyond_its_step(v100):
    bad = copy.deepcopy(v100)
    g6 = next(g for g in bad.gpus if g.gpu == 6)
    g6.memory["peak_step_offset_ms"] = 665.92  # main's number: from the start of the window spanning both GPUs
    (problem,) = memory_offset_problems(bad)
    assert "665.920 ms into step 0, a 21.310 ms step" in problem
