"""A fix that bundles pinned, asynchronous uploads with another lever keeps the other lever, not the pinning, where the
trace shows the uploads pinned and asynchronous already (``capture.applied``'s ``pinned_async_h2d``).

PyTorch's DataLoader fix reads "Load batches in DataLoader worker processes, into pinned memory, ..." with
``pin_memory=True`` in its code; an inference loop's "prepare the next input" fix reads "(tokenise and copy ahead,
pinned memory, non_blocking copies)" with ``x.pin_memory().to('cuda', non_blocking=True)``.  Beside copy records
that are all ``Memcpy HtoD (Pinned -> Device)`` from ``cudaMemcpyAsync`` (no call holding the host) the pinning is what
the program does: the workers and preparing ahead are what is left (h37-pinned32; ``real-h100-torch/
torch_input_bound`` and ``wild/d2d_v100`` were told "into pinned memory").  Truth by construction: the generator's
``input_bound`` (a training loop) and ``cpu_input`` (forward passes) copy each batch pinned with ``cudaMemcpyAsync``;
the control copies the same batch pageable and is still told to pin it.
"""

from __future__ import annotations

import pytest

from synthetic import torchtrace
from tb_gpu_advisor.frameworks import pytorch
from tests.support.paths import FIXTURES, SHARED_PROFILES
from tests.support.properties import in_use_problems
from tests.support.run_report import run_report

_ALREADY = "Already in use, so not suggested: pinned, asynchronous copies to the GPU"


def _host(folder, run):
    (h,) = run_report(folder, run).hosts
    return h


def _fix_words(h) -> str:
    return " ".join(" ".join(a.text.split()) for f in h.findings for a in f.actions)


def _pin_lines(h) -> list[str]:
    """The code lines of the host's fixes that pin an upload or copy it non_blocking."""
    return [ln for f in h.findings for a in f.actions for ln in (a.snippet or "").splitlines()
            if "pin_memory" in ln or "non_blocking=True" in ln]


@pytest.mark.parametrize("scenario, rule, rest", [
    ("input_bound", "input_bound", "Load batches in DataLoader worker processes"),
    ("cpu_input", "input_bound", "Prepare the next input while the GPU runs this one"),
])
def test_pinned_async_uploads_leave_the_fixes_other_levers(tmp_path, scenario, rule, rest):
    torchtrace.write_run(str(tmp_path), scenario)
    h = _host(tmp_path, scenario)
    assert "pinned_async_h2d" in h.capture["applied"]
    assert not in_use_problems(h.host, h)
    f = next(f for f in h.findings if f.rule == rule)
    assert any(a.text.startswith(rest) for a in f.actions)  # the other lever stays
    words = _fix_words(h)
    assert "into pinned memory" not in words and "pinned memory, non_blocking" not in words
    assert all("as already" in ln for ln in _pin_lines(h))
    assert _ALREADY in " ".join(f.summary.split())


def test_a_pageable_batch_is_still_told_to_load_into_pinned_memory(tmp_path):
    """The control: the same loop copying its batch from pageable memory (the host held in the copy's sync)."""
    torchtrace.write_run(str(tmp_path), torchtrace.PAGEABLE_INPUT, run="pageable_batch")
    h = _host(tmp_path, "pageable_batch")
    assert "pinned_async_h2d" not in (h.capture.get("applied") or {})
    assert pytorch.LOADER.text in [a.text for f in h.findings for a in f.actions]
    assert not any("as already" in ln for ln in _pin_lines(h))


def test_the_rest_of_a_fix_without_the_lever_is_the_fix():
    """A fix that holds no pinning (the confirm-on-one-batch fix) reads as written."""
    confirm = pytorch.confirm_input(pytorch.TRAINING_LOOP)
    assert pytorch.FIX_REST["pinned_async_h2d"](confirm) is None
    assert pytorch.FIX_REST["pinned_async_h2d"](pytorch.PIN_READBACK) is None  # a read-back's own pinned buffer


@pytest.mark.parametrize("folder, run", [(SHARED_PROFILES / "real-h100-torch", "torch_input_bound"),
                                         (FIXTURES / "wild", "d2d_v100")])
def test_real_pinned_uploads_are_not_told_into_pinned_memory(folder, run):
    """Read by hand: torch_input_bound's 10 ``Memcpy HtoD (Pinned -> Device)`` from 20 ``cudaMemcpyAsync`` (no
    ``cudaMemcpy``); d2d_v100's 151 pinned uploads, 0 pageable, 4812 ``cudaMemcpyAsync`` (PROVENANCE.md, h37-already31)."""
    if not folder.is_dir():
        pytest.skip("capture absent")
    h = _host(folder, run)
    assert "pinned_async_h2d" in h.capture["applied"]
    assert "into pinned memory" not in _fix_words(h)
    assert not in_use_problems(h.host, h)


def test_a_graph_replays_pinned_inputs_are_not_told_pinned_and_non_blocking_again():
    """The random walk's job (seed 5266): a CUDA graph loop whose one upload a step is pinned and asynchronous, its
    replay wait told "copy them into the graph's static tensors from pinned memory with non_blocking=True"."""
    from synthetic.randjobs import kineto_job
    from tests.support.random_jobs import check

    job = kineto_job(steps=18, train=True, dtype="fp32", layers=1, batch=2048, width=1024,
                     efficiency=0.7448792280287173, marker="range", range_name="train_step",
                     launch_us=13.533941155983662, loop_us=3.593450746939651, python_us=0.0, loader_us=0.0,
                     copies=[("pinned", 0.07070318911099135)], unrecorded_us=0.0, idle_us=0.0, reads=0,
                     end_sync="item", graph=True, comm_us=0.0)
    broken = check(job)
    assert not [b for b in broken if b.startswith("in-use")], broken


def _batch_and_scalars(pageable_bytes: int):
    """A loop that pins its 32 MB batch and copies it asynchronously, then copies 8 small tensors of its own from
    pageable memory with ``cudaMemcpyAsync`` and no sync (``wild/dlrm_v100``'s offsets and scalars, 64-2808 B)."""
    def body(r: torchtrace.Rank) -> None:
        r.cpu(torchtrace.DATALOADER, 10_000.0)
        r.copy_h2d(32.0, 1_300.0)
        for _ in range(8):
            op = r.cpu("aten::copy_", 20.0, advance=False)
            r.memcpy(op, "Memcpy HtoD (Pageable -> Device)", pageable_bytes, 2.0)
            r.host_us += 20.0
        torchtrace._healthy(r)
    return body


@pytest.mark.parametrize("pageable_bytes, in_use", [(2808, True), (4 << 20, False)])
def test_small_pageable_copies_beside_a_pinned_batch_leave_it_in_use(tmp_path, pageable_bytes, in_use):
    """Truth by construction: the batch pinned and copied ``non_blocking``; 8 pageable copies a step of 2808 B (under
    ``excessive_memcpy.pin_bytes``: their time is the call's, pinning speeds nothing) or, the control, of 4 MB each
    (worth pinning: the uploads are not all pinned, and the fix says so)."""
    sc = torchtrace.Scenario(1, torchtrace._single(_batch_and_scalars(pageable_bytes)), ["input_bound"], [],
                             "a pinned batch beside pageable copies")
    torchtrace.write_run(str(tmp_path), sc, run="batch_and_scalars")
    h = _host(tmp_path, "batch_and_scalars")
    assert ("pinned_async_h2d" in (h.capture.get("applied") or {})) is in_use
    assert not in_use_problems(h.host, h)
    words = _fix_words(h)
    assert ("into pinned memory" in words) is not in_use
    if in_use:
        assert "besides them 8 copies a step from pageable memory, under 64 KiB each on average" in h.capture["applied"][
            "pinned_async_h2d"]


@pytest.mark.skipif(not (FIXTURES / "wild" / "dlrm_v100").is_dir(), reason="fixture absent")
def test_dlrm_v100_s_pinned_batch_is_not_told_to_be_pinned():
    """Read by hand (worker0, raw events): 5 ``aten::pin_memory`` in the DataLoader's ``__next__`` on the main thread,
    then in ``## copy_batch_to_gpu ##`` 5 ``cudaMemcpyAsync`` of ``Memcpy HtoD (Pinned -> Device)`` (832, 13696,
    1664, 3336, 64 B) with no sync after them; the step's other 8 H2D copies are pageable, 64-2808 B (11.5 KB in all).
    Main told every worker "Load batches ... into pinned memory" and "Copy batches to the GPU asynchronously from
    pinned memory"."""
    r = run_report(FIXTURES / "wild", "dlrm_v100")
    for h in r.hosts:
        assert "pinned_async_h2d" in h.capture["applied"], h.host
        assert "into pinned memory" not in _fix_words(h)
        assert pytorch.NON_BLOCKING.text not in [a.text for f in h.findings for a in f.actions]
        assert not in_use_problems(h.host, h)
