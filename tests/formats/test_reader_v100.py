"""Reader on the real TF 2.4 8 x V100 capture, against an independent full protobuf parse."""


import numpy as np
import pytest

from tb_gpu_advisor.formats.xplane.reader import read_timeline
from tests.support.paths import REPO
from tests.support.reference_parse import assert_matches_reference

V100 = REPO.parent / "shared" / "profiles" / "v100_bert_8gpu_tf24.xplane.pb"
pytestmark = pytest.mark.skipif(not V100.exists(), reason=f"real capture not found at {V100} (CI has ../shared)")


@pytest.fixture(scope="module")
def tl():
    return read_timeline(str(V100))


def test_every_event_and_stat_matches_full_parse(tl):
    assert assert_matches_reference(tl, str(V100)) == 23128


def test_planes_and_gpu_device_stats(tl):
    assert [p.gpu_id for p in tl.gpu_planes()] == list(range(8))
    gpu4 = tl.plane("/device:GPU:4")
    assert gpu4.stats["core_count"] == 80
    assert (gpu4.stats["compute_cap_major"], gpu4.stats["compute_cap_minor"]) == (7, 0)
    assert [ln.name for ln in gpu4.lines][-1] == "Steps"
    assert tl.plane("/host:CPU").num_events == 15354
    assert tl.hostnames == ["34.83.195.179:6003"]


def test_ref_value_kernel_details_resolved_to_text(tl):
    compute = tl.plane("/device:GPU:4").line("Stream #134(Compute)")
    details = {compute.plane.string(int(i)) for i in np.unique(compute.str_stat("kernel_details"))}
    assert "regs:38 shm:0 grid:160,1,1 block:1024,1,1" in details
    assert all(d is None or d.startswith("regs:") for d in details)


def test_decoding_in_small_event_batches_gives_the_same_timeline(monkeypatch):
    """Lines are decoded in bounded batches; batch seams must not shift owners or values."""
    from tb_gpu_advisor.formats.xplane import reader

    monkeypatch.setattr(reader, "EVENT_CHUNK", 7)
    assert assert_matches_reference(read_timeline(str(V100)), str(V100)) == 23128
