"""A GPU plane that names no model still says what it is (h37-probe43w): TF 2.4's planes of a V100 state no name and
no vendor, only compute capability 7.0, 80 SMs and 15.8 GiB, which more than one tabled V100 fits (so none is
inferred).  The capture's GPUs read "8 x GPU" on f51bfaaf -- the one thing the planes say left out; now "8 x GPU of
compute capability 7.0 with 80 SMs and 15.8 GiB".  Planes that name their model keep their names (the control)."""

from __future__ import annotations

import glob
import os

import pytest

from tb_gpu_advisor.formats.xplane.adapter import read_timeline, visible_gpus

SHARED = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "profiles")
V100 = os.path.join(SHARED, "v100_bert_8gpu_tf24.xplane.pb")
H100 = sorted(glob.glob(os.path.join(SHARED, "real-h100-jax", "launch_bound_eager", "plugins", "profile", "*",
                                     "*.xplane.pb")))


@pytest.mark.skipif(not os.path.exists(V100), reason="needs ../shared/profiles (the real V100 capture)")
def test_planes_without_a_name_are_listed_by_their_properties():
    listed = visible_gpus(read_timeline(V100))["visible_gpus"]
    assert listed == "8 x GPU of compute capability 7.0 with 80 SMs and 15.8 GiB", listed
    assert "," not in listed  # one model: the listing's separator never splits it


@pytest.mark.skipif(not H100, reason="needs ../shared/profiles/real-h100-jax")
def test_planes_that_name_their_model_keep_the_name():
    assert visible_gpus(read_timeline(H100[0]))["visible_gpus"] == "NVIDIA H100 80GB HBM3"
