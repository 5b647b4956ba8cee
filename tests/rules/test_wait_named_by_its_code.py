"""A wait inside the backward pass is named by the node autograd's engine ran, not by the engine's wrapper
(h37-probe45p, issue #37 class 3; probe45p's brief item 3).

Autograd's engine records each node it runs as ``autograd::engine::evaluate_function: IndexBackward0`` around
``IndexBackward0`` around the node's ATen ops (a real trace's nesting: tests/fixtures/wild/hta_v100's
``AddmmBackward0``).  The waits were named by the outermost op around them -- the op the program called, in the
forward -- which in the backward is the engine's wrapper, the same for every node: the backward of ``x[mask]``
(``IndexBackward0``: its ``index_put_`` reads the mask's count in ``aten::nonzero``) and a custom Function's
``.item()`` (``ClampScaleBackward``) read "autograd::engine::evaluate_function: Cl… ×4" in the finding.

Truth by construction: ``synthetic.torchtrace.write_backward_read`` (the node, four waits a step on autograd's thread).

And an index's upload is told to keep the index on the device (brief item 4): ``x[idx]`` with a CPU ``idx`` blocks in
the index's pageable copy inside ``aten::index`` (``synthetic.torchtrace.write_cpu_index``), whose fix main read as
a batch's (the DataLoader's ``pin_memory`` first).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.formats.kineto import adapter as kineto_adapter
from tb_gpu_advisor.frameworks import pytorch
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host, host_metrics


@pytest.mark.parametrize("case", ["mask_index", "custom_item"])
def test_a_backward_wait_is_named_by_its_node(tmp_path: Path, case: str) -> None:
    path = str(tmp_path / "w.pt.trace.json")
    truth = tt.write_backward_read(path, case)
    m = host_metrics(kineto_adapter.read_trace(path))
    # main: [("autograd::engine::evaluate_function: IndexBackward0", 4.0)]
    assert m.syncs.callers == [(truth["node"], pytest.approx(truth["reads_per_step"]))], m.syncs.callers
    assert m.syncs.calls_per_step == pytest.approx(truth["reads_per_step"])


def test_the_finding_names_the_custom_functions_backward(tmp_path: Path) -> None:
    """The custom Function's ``.item()`` idles the GPU while its backward works on the value: the finding says where,
    with the read's fix (move ``.item()`` out), not an op's size fix."""
    p = tmp_path / "w.pt.trace.json"
    truth = tt.write_backward_read(str(p), "custom_item")
    rep = analyze_host(HostFile(p.name, str(p), p.stat().st_size, 0, "kineto"))
    (f,) = [f for f in rep.findings if f.rule == "host_sync" and "#" not in f.id]
    words = " ".join(f.summary.split())
    assert f"(in {truth['node']} ×{truth['reads_per_step']};" in words and "evaluate_function" not in words, words
    assert ".item()" in f.actions[0].text


def test_the_wrapper_names_its_node() -> None:
    """PyTorch's wrapper gives the node it runs; nothing else is a wrapper (an ATen op, the node itself)."""
    assert pytorch.FRAMEWORK.engine_wrapper("autograd::engine::evaluate_function: IndexBackward0") == "IndexBackward0"
    assert not any(pytorch.FRAMEWORK.engine_wrapper(n) for n in ("IndexBackward0", "aten::index", "autograd::grad"))
    assert re.fullmatch(r"\w+", pytorch.engine_wrapped("autograd::engine::evaluate_function: ClampScaleBackward"))


def test_an_index_uploads_wait_is_told_to_keep_the_index_on_the_device(tmp_path: Path) -> None:
    """``x[idx]`` with ``idx`` on the CPU (``torchtrace.write_cpu_index``): its blocking copy is the index's upload,
    named ``aten::index``; the fix keeps the index on the device first (main led with the DataLoader's
    ``pin_memory``, a batch's fix the program has no batch for here)."""
    truth = tt.write_cpu_index(str(tmp_path))
    p = Path(truth["paths"][0])
    rep = analyze_host(HostFile(p.name, str(p), p.stat().st_size, 0, "kineto"))
    (f,) = [f for f in rep.findings if f.rule == "excessive_memcpy"]
    assert f"({truth['op']} ×{truth['copies_per_step']})" in " ".join(f.summary.split()), f.summary
    assert f.actions[0] == pytorch.INDEX_ON_DEVICE, f.actions[0].text


def test_a_batch_uploads_wait_keeps_the_pinning_fix(tmp_path: Path) -> None:
    """Control: ``x.to('cuda')`` of a pageable batch is no index's upload: pinning first, no index words."""
    truth = tt.write_pageable_to_device(str(tmp_path))
    p = Path(truth["paths"][0])
    rep = analyze_host(HostFile(p.name, str(p), p.stat().st_size, 0, "kineto"))
    (f,) = [f for f in rep.findings if f.rule == "excessive_memcpy"]
    assert pytorch.INDEX_ON_DEVICE not in f.actions and "pin" in f.actions[0].text.lower(), f.actions[0].text
