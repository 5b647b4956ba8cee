"""A launch period whose every repeat runs one layer of the program's own per-layer ranges (``layer_0_forward`` ...)
is the model's layers, not its steps: one pass where the window runs each layer once, the passes where it runs them
again (issue #37 class 2: a job described by its NVTX; h37-nvtx62's layer law, for a program's own layer names and
the launch period).

Real: Sh1mwww/llama3-inference ``demo.sqlite`` (blob 24d3a6e9; no licence: read locally from
/work/wild63/huntnsys63/llama, the test skips where it is absent; h37-huntnsys63).  A weight-streaming demo on an RTX
4060 Ti inside one ``weight_streaming_demo`` range: 8 layers, each ``ensure_layer_N`` (a simulated 51 ms weight load
on a cache miss), ``layer_N_kv_fetch``, ``layer_N_forward`` (the same 8 kernels, 2 copies and 2 fills, then a sync).
After the crash fix (``test_number_that_only_drops63``) base read "6 steps, step 64.9 ms": the period's 8 repeats,
one per layer.

Truth by construction: ``synthetic.nsysexport.write_layer_pass(layer_range="layer_{i}_forward", sync=True,
outer=...)`` -- 1 or 3 passes of 8 layers, each layer's own kernel sequence waited for, a 20 ms pause after each.
Control: the same program whose ranges name no layer (``chunk_N``) keeps the period's reading.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.frameworks import nvtx
from tests.support.cli_report import first_host

REAL = Path("/work/wild63/huntnsys63/llama/demo.sqlite")


def _host(tmp_path: Path, iterations: int, layer_range: str = "layer_{i}_forward") -> tuple[dict, dict]:
    p = tmp_path / f"pass{iterations}.sqlite"
    truth = nx.write_layer_pass(str(p), iterations=iterations, layers=8, pause_after=tuple(range(8)), pause_ms=20.0,
                                layer_range=layer_range, sync=True, outer="weight_streaming_demo")
    return first_host(p), truth


def test_one_pass_of_layers_is_one_pass(tmp_path):
    host, truth = _host(tmp_path, 1)
    steps = host["steps"]
    assert steps["count"] == 1 and steps["source"] in ("single_pass", "whole_capture"), steps


def test_three_passes_of_layers_are_three_passes(tmp_path):
    host, truth = _host(tmp_path, 3)
    steps = host["steps"]
    assert steps["found"] == 3, steps
    assert "one per layer of `layer_#_forward`" in steps["note"], steps["note"]
    assert host["achievable"]["step_ms"] == pytest.approx(truth["period_ms"], rel=0.02)


def test_a_layer_word_index_is_a_layer_family():
    assert nvtx.layer_family("layer_0_forward") == "layer_#_forward"
    assert nvtx.layer_family("ensure_layer_12") == "ensure_layer_#"
    assert nvtx.layer_family("model.layers.3.mlp") == "model.layers.#.mlp"  # h37-nvtx62's, unchanged
    for counter in ("iter_3", "train_step 3", "token_5_processing", "conv2d", "player 3", "block 17"):
        assert nvtx.layer_family(counter) is None, counter


def test_control_ranges_that_name_no_layer_keep_the_period(tmp_path):
    host, _ = _host(tmp_path, 1, layer_range="chunk_{i}")
    assert host["steps"]["count"] > 1, host["steps"]


@pytest.mark.skipif(not REAL.exists(), reason="Sh1mwww/llama3-inference demo.sqlite has no licence: kept locally")
def test_real_weight_streaming_demo_is_one_forward(tmp_path):
    host = first_host(REAL)
    assert host["steps"]["count"] == 1 and host["job"]["kind"] == "inference", host["steps"]
