"""A program with no ML framework in the capture that marks fetching its batch has an input pipeline: its own
(issue #37 class 4, "the input wait is the input pipeline's own time"; h37-nvtxinput41).

Wrong assumption on main 84eea5f7: *a GPU program with no ML framework has no input pipeline*
(``frameworks.native``: ``input_bound`` and ``input_wait_share`` "n/a: no ML framework in the capture").  A C++
trainer (llm.c's ``dataloader_next_batch``) or a Python loop annotated with NVTX alone, whose Nsight export shows no
framework, marks its fetch with a range named for it; main booked the GPU's idle through it as host work between
iterations (``step_gaps``: "host work between iterations (in the program's own ranges `load_batch` 3.00 ms)") and its
fix said to queue the next iteration's kernels before the host's bookkeeping.  The fetch is the job's input: the
input check reads it as PyTorch's own ranges are read (``Framework.input_range``), with a fix in the program's terms
(a loader thread, pinned buffers, an asynchronous copy), and host time no range names stays apart.

By construction (``synthetic.nsysexport.write_marked_input_loop``): ``load_ms`` a step in the ``load_batch`` range,
``unmarked_ms`` of host time no range covers; the control names its host work for no batch.
"""

from __future__ import annotations

import pytest

from synthetic import nsysexport as nx
from tests.support.generated_host import nsys_host


def _host(tmp_path, **kw) -> dict:  # noqa: ANN001 - pytest's
    return nsys_host(tmp_path, nx.write_marked_input_loop, "trainer.sqlite", **kw)


def _card(host: dict) -> dict:
    return next(c for c in host["headline"] if c["id"] == "input_wait_share")


@pytest.mark.parametrize("unmarked_ms", [0.0, 2.0])
def test_a_native_programs_marked_fetch_is_its_input_wait(tmp_path, unmarked_ms: float) -> None:  # noqa: ANN001
    host = _host(tmp_path, unmarked_ms=unmarked_ms)
    truth = host["truth"]
    assert host["capture"]["framework"] == "native"
    step = sum(host["breakdown_ms"].values())
    # main: "n/a: no ML framework in the capture", the fetch booked as host compute
    assert host["breakdown_ms"]["input_wait"] == pytest.approx(truth["input_ms"], abs=0.05)
    assert _card(host)["value"] == pytest.approx(truth["input_ms"] / step, abs=0.01)
    (f,) = [f for f in host["findings"] if f["rule"] == "input_bound"]
    assert f"`{truth['fetch']}`" in f["summary"] and f["saving"]["ms_per_step"] == pytest.approx(truth["input_ms"], abs=0.05)
    fix = " ".join(a["text"] + (a.get("snippet") or "") for a in f["actions"])
    assert "cudaMemcpyAsync" in fix and "DataLoader" not in fix and "tf.data" not in fix, fix
    # the fetch is no host work between iterations: a gap finding, where one stands, names no fetch range
    gaps = [g for g in host["findings"] if g["rule"] == "step_gaps"]
    assert all(truth["fetch"] not in g["summary"] for g in gaps), gaps


def test_control_host_work_named_for_no_batch_is_no_input(tmp_path) -> None:  # noqa: ANN001
    """Control: the same loop whose range names its own bookkeeping (``update_stats``), not a fetch: no input wait,
    no input finding -- its time stays host work between iterations."""
    host = _host(tmp_path, fetch="update_stats")
    assert host["breakdown_ms"]["input_wait"] == 0.0
    assert _card(host)["value"] is None and "no ML framework" in _card(host)["meaning"]
    assert not [f for f in host["findings"] if f["rule"] == "input_bound"]
    assert any(f["rule"] == "step_gaps" for f in host["findings"])


def test_the_fetch_fix_is_in_the_gpus_runtime_words() -> None:
    """The fix names the runtime's calls: on an AMD GPU (a rocprof capture of a HIP trainer) HIP's, never CUDA's."""
    from tb_gpu_advisor import devices
    from tb_gpu_advisor.frameworks import native

    for vendor in (devices.amd, devices.nvidia):
        (fix,) = native.for_vendor(native.FRAMEWORK, vendor).fixes["input_bound"]
        said = fix.text + fix.snippet
        runtime = "hip" if vendor is devices.amd else "cuda"
        assert f"{runtime}MemcpyAsync" in said and f"{runtime}EventRecord" in said, said
        assert vendor is not devices.amd or "cuda" not in said.lower(), said
