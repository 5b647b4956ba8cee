"""A JAX or TensorFlow program's own range for fetching its batch is its input pipeline (issue #37 item 4, left by
h37-inputwords: "the range words are PyTorch's").

The assumption was that only a PyTorch program marks where it fetches its batch (``record_function('get_batch')``,
NVTX).  A JAX program's ``jax.profiler.TraceAnnotation('get_batch')`` and a TF program's
``tf.profiler.experimental.Trace('get_batch')`` are TraceMe ranges on its Python thread, told from the runtime's
events by where they sit (``frameworks.user_ranges``): named for the batch, with no kernel launched inside, they are
the input pipeline's own events as the DataLoader's ``__next__`` is.  Then the input wait is theirs (and the batch's
copy to the device), and other host time before the step's first op is named apart, not counted -- where main read
the whole lead as "the host's own ops ... the step makes its input itself" (JAX) or as host work (TF).

None of the real JAX or TF captures kept marks its batch's fetch (``real-h100-jax``'s loops load in untraced Python;
``v100_bert_8gpu_tf24`` reads tf.data's own iterator): the truth is by construction (``synthetic.jaxcapture.fetch_loop``,
``synthetic.tfcapture``'s ``host_ranges``).  Controls: a batch-named range around the jitted call (its command buffer's
``cuGraphLaunch`` inside) is no fetch; a range named for other work is no input; the real JAX input-bound capture keeps
its words.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from synthetic import jaxcapture as jc
from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import analyze_session, host_metrics
from tests.support.intervals import union
from tests.support.paths import SHARED_PROFILES
from tests.support.tf_ranges import tf_loop_with_ranges

STEPS = 12
FETCH_US, OTHER_US = 4000.0, 2000.0


def _host(path: Path) -> dict:
    return analyze_session("w", "s", [SimpleNamespace(host="h0", path=str(path), format="xplane",
                                                      size=os.path.getsize(path))]).to_dict()["hosts"][0]


def _input_finding(host: dict) -> dict:
    return next(f for f in host["findings"] if f["rule"] == "input_bound")


def _idle_inside(cap: jc.JaxCapture, name: str) -> float:
    """Median ms per step of the GPU's idle inside the ``name`` ranges, from what the generator wrote."""
    busy = union([(int(a), int(b)) for ex in cap.execs for a, b, *_ in ex.kernels]
                 + [(int(a), int(b)) for ex in cap.execs for a, b, _ in ex.copies])
    out = []
    for nm, a, b in cap.annotations:
        if nm == name:
            out.append((b - a - sum(max(0, min(b, y) - max(a, x)) for x, y in busy)) / 1e9)
    return float(np.median(out))


def _jax(tmp_path: Path, name: str) -> tuple[Path, jc.JaxCapture]:
    cap = jc.JaxCapture(step_annotation=True, command_buffers=True, jitter=0.0)
    kernels = jc.mlp_bf16_step(4, command_buffers=True)
    cap.add_hlo(jc.mlp_hlo(cap.module, kernels))
    jc.fetch_loop(cap, kernels, STEPS, name, FETCH_US, OTHER_US)
    (path,) = jc.JaxScenario(name, cap.finish(), cap.truth(name, "fetch loop", "trace_train")).write(tmp_path)
    return path, cap


def test_a_jax_programs_get_batch_annotation_is_its_input_pipeline(tmp_path: Path) -> None:
    path, cap = _jax(tmp_path, "get_batch")
    fetch_idle = _idle_inside(cap, "get_batch")
    assert fetch_idle > 1.0  # the premise: the GPU idles inside the fetch
    m = host_metrics(read_trace(str(path)))
    # main: source "before_first_op", the whole lead (3.9 ms: the fetch and the 2 ms of other work) as input
    assert m.input.source == "pipeline"
    assert m.input.pre_op_ms_per_step == pytest.approx(OTHER_US / 1000, abs=0.05)  # the other work, named apart
    # the wait: the GPU's idle inside the range (less the gaps between its kernels, kernel switches) -- never the other
    # work's, nor the batch's staging on the copy's worker thread while the loop runs that work (h37-copies23: main
    # 2.52 ms, 0.54 ms of the 4 MiB batch's staging in both input and "other")
    wait = m.breakdown.input_wait
    assert fetch_idle - m.breakdown.kernel_switch - 0.01 <= wait <= fetch_idle + 0.01
    assert wait + m.input.pre_op_ms_per_step <= fetch_idle + OTHER_US / 1000 + 0.01  # the lead they share
    (name, held), = m.input.ranges
    assert name == "get_batch" and held == pytest.approx(fetch_idle, abs=0.05)
    f = _input_finding(_host(path))
    assert "the program's range for fetching its batch (`get_batch`" in f["summary"]
    assert "Another 2.00 ms per step of host time before the step's first op is not the input pipeline's" in f["summary"]
    assert "makes its input itself" not in f["summary"]


def test_a_tensorflow_programs_get_batch_trace_is_its_input_pipeline(tmp_path: Path) -> None:
    """By construction: ``Trace('get_batch')`` around 1.5 ms of Python a step, the GPU idle through it, then
    ``Trace('log_metrics')`` around 0.5 ms."""
    host = _host(tf_loop_with_ranges(tmp_path, "tf_fetch", [("get_batch", 1500.0), ("log_metrics", 500.0)], STEPS))
    # main: input 0.01 ms (the graph's send of the batch only), the fetch booked as host compute
    assert host["breakdown_ms"]["input_wait"] == pytest.approx(1.5 + 0.01, abs=0.02)
    assert host["breakdown_ms"]["host_compute"] == pytest.approx(0.5, abs=0.02)  # log_metrics stays host work
    assert "the program's range for fetching its batch (`get_batch` 1.50 ms)" in _input_finding(host)["summary"]


def test_control_a_batch_named_range_around_the_jitted_call_is_no_fetch(tmp_path: Path) -> None:
    """``TraceAnnotation('train_batch')`` around the jitted call: its command buffer's ``cuGraphLaunch`` runs inside
    it -- the step's compute, no fetch, whatever its name (a graph launch is no ``cudaLaunchKernel``)."""
    cap = jc.JaxCapture(step_annotation=True, command_buffers=True, jitter=0.0)
    kernels = jc.mlp_bf16_step(4, command_buffers=True)
    cap.add_hlo(jc.mlp_hlo(cap.module, kernels))
    for _ in range(STEPS):
        cap.begin_step()
        cap.host_work(FETCH_US)
        batch = cap.device_put(512 * 4096 * 2, "bf16[512,4096]")
        with cap.annotation("train_batch"):
            cap.execute(kernels, inputs=(batch,))
        cap.end_step()
    (path,) = jc.JaxScenario("ctl", cap.finish(), cap.truth("ctl", "ctl", "trace_train")).write(tmp_path)
    m = host_metrics(read_trace(str(path)))
    assert m.input.source == "before_first_op" and m.input.pre_op_ms_per_step == 0.0


def test_control_a_range_named_for_other_work_reads_as_before(tmp_path: Path) -> None:
    """``TraceAnnotation('log_metrics')`` in its place: no pipeline event, the lead is read as before (the host's own
    recorded work before the first op) up to the batch's put; the untraced 2 ms after the put is no fetch
    (h37-probe43t: main read it as input too, ``pre_op_ms_per_step`` 0)."""
    path, _ = _jax(tmp_path, "log_metrics")
    m = host_metrics(read_trace(str(path)))
    assert m.input.source == "before_first_op"
    assert m.input.pre_op_ms_per_step == pytest.approx(OTHER_US / 1000, abs=0.05)
    assert "`log_metrics`" in _input_finding(_host(path))["summary"]


def test_control_the_real_jax_input_bound_capture_keeps_its_words() -> None:
    """Real (H100, jax 0.11): a loop loading in untraced Python marks no range: an untraced loader, as before."""
    runs = sorted((SHARED_PROFILES / "real-h100-jax" / "input_bound").glob("plugins/profile/*/*.xplane.pb"))
    if not runs:
        pytest.skip("shared real-h100-jax captures not present")
    m = host_metrics(read_trace(str(runs[0])))
    assert m.input.source == "before_first_op" and m.input.pre_op_ms_per_step == 0.0


def test_control_a_callback_at_a_batchs_end_is_no_fetch(tmp_path: Path) -> None:
    """``Trace('MetricsCallback.on_train_batch_end')`` (a Keras callback's hook) names a batch, and fetches nothing:
    its 1.5 ms stays the host's own work (the ``step_gaps_callbacks`` scenario's callbacks, between steps)."""
    host = _host(tf_loop_with_ranges(tmp_path, "tf_hook", [("MetricsCallback.on_train_batch_end", 1500.0)], STEPS))
    assert host["breakdown_ms"]["input_wait"] < 0.05
    assert host["breakdown_ms"]["host_compute"] == pytest.approx(1.5, abs=0.02)


def test_a_fetch_range_between_steps_is_told_once_as_input_not_as_the_gaps_host_work(tmp_path: Path) -> None:
    """The same TF loop: its ``get_batch`` range holds the gap's input wait (1.51 ms, the input-bound finding's), so
    the step-gap finding's ranges are the gap's other time alone -- ``log_metrics`` 0.5 ms (control: still named, as
    host work).  h37-inputjax's branch named ``get_batch`` both as "1.51 ms of it input wait" and among "the
    program's own ranges" of the host work between steps (h37-review19)."""
    host = _host(tf_loop_with_ranges(tmp_path, "tf_gaps", [("get_batch", 1500.0), ("log_metrics", 500.0)], STEPS))
    gaps = next(f for f in host["findings"] if f["rule"] == "step_gaps")
    assert "of it input wait" in gaps["summary"]  # the premise: the gap's input is told there
    assert "`get_batch`" not in gaps["summary"], gaps["summary"]
    assert "in the program's own ranges `log_metrics` 500 us" in gaps["summary"], gaps["summary"]
    (ranges,) = [t for t in gaps["evidence"] if t["title"].startswith("The program's own ranges in the gaps")]
    assert [r[0] for r in ranges["rows"]] == ["log_metrics"]
    assert ranges["rows"][0][1] == pytest.approx(0.5, abs=0.02)
