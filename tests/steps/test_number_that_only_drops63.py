"""A range family whose number only drops to its least value (``evict_layer_3`` then ``evict_layer_0``) counts
nothing: the steps stage reads its names apart and the host is analysed -- never "analysis failed" (exit 2).

Real: Sh1mwww/llama3-inference ``demo.sqlite`` (blob 24d3a6e9; no licence: read locally from
/work/wild63/huntnsys63/llama, the test skips where it is absent; h37-huntnsys63).  Nsight Systems, RTX 4060 Ti, a
weight-streaming demo of 8 decoder layers under NVTX (``ensure_layer_N``, ``h2d_transfer_layer_N`` of 51 ms holding
no copy: transfers simulated on the host, ``layer_N_forward``), and an ``evict_layer_-3`` range.  Base:
"host 'demo' could not be analysed: analysis failed: ValueError: zero-size array to reduction operation minimum which
has no identity", exit 2 (``steps.ranges._counts_steps`` took the least of a number's rises where it had none).

Truth by construction: ``synthetic.nsysexport.write_window(range_names=...)``; control: a family that counts up.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.runtime.pipeline import analyze_session

REAL = Path("/work/wild63/huntnsys63/llama/demo.sqlite")


def _host(path) -> dict:
    hosts = [SimpleNamespace(host="h0", path=str(path), format="nsys", size=os.path.getsize(path))]
    (host,) = analyze_session("w", "s", hosts).to_dict()["hosts"]
    return host


def test_a_number_that_only_drops_is_no_counter(tmp_path):
    p = tmp_path / "evict.sqlite"
    nx.write_window(str(p), "nvtx_only", ranges=1, range_names=("evict_layer_3", "evict_layer_0"))
    host = _host(p)
    assert not host.get("error"), host.get("error")
    assert host["job"]["kind"] == "no_gpu" and "`evict_layer_3`" in host["job"]["kind_evidence"], host["job"]


def test_control_a_family_that_counts_up(tmp_path):
    p = tmp_path / "count.sqlite"
    nx.write_window(str(p), "nvtx_only", ranges=1, range_names=("evict_layer_0", "evict_layer_1"))
    host = _host(p)
    assert not host.get("error") and host["job"]["kind"] == "no_gpu", host


@pytest.mark.skipif(not REAL.exists(), reason="Sh1mwww/llama3-inference demo.sqlite has no licence: kept locally")
def test_real_weight_streaming_demo_is_analysed():
    host = _host(REAL)
    assert not host.get("error"), host.get("error")
    assert host["job"]["kind"] == "inference" and host["steps"]["count"] >= 1, host["job"]
