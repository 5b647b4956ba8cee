"""Generated JAX/XLA captures (synthetic/jaxcapture.py) against the truth each one measures from what it wrote.

Two families share the generator:

* the step-source scenarios (a synchronous loop: the host waits for the loss,
  then prepares the next batch, ~2.5 ms with the GPU idle), one per step source:
  ``jax_xla_modules`` -> ``xla_modules``; ``jax_raw`` -> ``xla_module_launches``;
  ``jax_raw_no_module_events`` -> ``gpu_busy_clusters``; ``jax_no_steps`` ->
  ``whole_capture``; ``jax_step_annotation`` -> ``trace_train``;
* the scenarios mirroring real H100 runs (async dispatch, command buffers or
  per-kernel launches, nvjet/Triton/ffma kernels), whose layout against the real
  files is checked in ``test_synthetic_follows_real.py``.

Times compare with :class:`JaxTruth` fields: under async dispatch the host
step windows (``step_time_ps``) are not step times; the device step
(``device_step_ps``: device start of step k to device start of k+1) is.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
from types import SimpleNamespace

import numpy as np
import pytest

from synthetic.jaxcapture import JAX_SCENARIOS, THREAD_ID_HLO_MODULE, THREAD_ID_HLO_OP
from tb_gpu_advisor.common import jsonout
from tb_gpu_advisor.formats.xplane.adapter import to_trace
from tb_gpu_advisor.formats.xplane.reader import read_timeline
from tb_gpu_advisor.job import detect_job
from tb_gpu_advisor.model.trace import device_launches
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tb_gpu_advisor.steps.detect import detect_steps
from tests.support.reference_parse import assert_matches_reference
from tests.support.report_store import session_report

NAMES = sorted(JAX_SCENARIOS)
SYNC = {"jax_xla_modules", "jax_raw", "jax_raw_no_module_events", "jax_step_annotation"}
#: Kernels whose precision a capture shows (cuBLAS names) are bf16 in every scenario but these two.
FP32 = {"jax_fp32_highest"}
UNKNOWN_PRECISION = {"jax_eager_ops", "jax_eager_chain"}  # XLA fusions and a Triton dot only: no dtype in the capture


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    root = tmp_path_factory.mktemp("jax")
    out = {}
    for name, fn in JAX_SCENARIOS.items():
        sc = fn()
        out[name] = (sc, str(sc.write(root)[0]))
    return out


@pytest.fixture(scope="module")
def reports(written):
    return {name: analyze_host(SimpleNamespace(host="jaxhost", path=path)) for name, (_, path) in written.items()}


def _names(line) -> list[str]:
    return [str(n) for n in line.names()]


def _compute_stream(gpu):
    return next(ln for ln in gpu.lines if ln.name.startswith("Stream #") and "Compute" in ln.name)


def _bad(rep) -> list:
    return [f for f in rep.findings if f.severity in ("warning", "critical")]


@pytest.mark.parametrize("name", NAMES)
def test_reader_equals_full_parse_and_jax_structure(written, name):
    sc, path = written[name]
    truth = sc.truth
    tl = read_timeline(path)
    assert assert_matches_reference(tl, path) == tl.num_events > 0
    assert {"/host:CPU", "/device:GPU:0", "Task Environment"} <= {p.name for p in tl.planes}

    python = tl.plane("/host:CPU").line("python3")
    names = _names(python)
    if name in SYNC:
        calls = len(truth.step_windows_ps)
        fn = truth.module.removeprefix("jit_")
        assert names.count(f"PjitFunction({fn})") >= calls  # real captures nest it twice under one name
        assert names.count(f"{truth.module}:XLA GPU module") == (0 if name == "jax_raw_no_module_events" else calls)
        assert names.count("train") == (calls if truth.expected_source == "trace_train" else 0)
    elif truth.expected_source == "trace_train":
        assert names.count("train") == truth.num_steps

    gpu = tl.plane("/device:GPU:0")
    compute = _compute_stream(gpu)
    for stat in ("hlo_op", "hlo_module", "correlation_id", "kernel_details"):
        assert compute.has_stat(stat).any(), stat
    ops = {gpu.string(int(i)) for i in np.unique(compute.str_stat("hlo_op", inherit=False)) if int(i) >= 0}
    if truth.command_buffers:
        assert ops == {"command_buffer_1"}  # per-op names are lost inside a graph, as in the real files
    else:
        assert ops == truth.hlo_ops
    counts: dict[str, int] = {}
    for n in _names(compute):
        counts[n] = counts.get(n, 0) + 1
    # memsets are `Memset <n>` on the stream, `Memset` in the truth's kernel list
    assert {k.split(" ")[0]: 0 for k in counts} == {k.split(" ")[0]: 0 for k in truth.kernel_counts}
    assert sum(counts.values()) == sum(truth.kernel_counts.values())

    # every device activity has its host launch record (same correlation_id) on some host thread
    host_corr: set[int] = set()
    for line in tl.plane("/host:CPU").lines:
        host_corr.update(line.int_stat("correlation_id", inherit=False).tolist())
    for line in gpu.lines:
        if line.name.startswith("Stream #"):
            assert set(line.int_stat("correlation_id", inherit=False).tolist()) <= host_corr, line.name

    xm, xo = gpu.line("XLA Modules"), gpu.line("XLA Ops")
    if truth.derived_lines:
        assert xm is not None and xo is not None
        assert set(_names(xm)) == {truth.module_event} == {f"{truth.module}({truth.program_id})"}
        assert len(xm) == truth.num_steps
        assert {n.split("/", 1)[1] for n in _names(xo)} == truth.hlo_ops
    else:
        assert xm is None and xo is None


def test_derived_line_ids_are_the_stock_derived_ids(written):
    from tb_gpu_advisor.formats.xplane.schema import message_class

    sc, path = written["jax_xla_modules"]
    space = message_class("XSpace").FromString(open(path, "rb").read())
    gpu = next(p for p in space.planes if p.name == "/device:GPU:0")
    ids = {ln.name: ln.id for ln in gpu.lines}
    assert ids["XLA Modules"] == THREAD_ID_HLO_MODULE and ids["XLA Ops"] == THREAD_ID_HLO_OP
    display = {m.value.name: m.value.display_name for m in gpu.event_metadata}
    some_op = sorted(sc.truth.hlo_ops)[0]
    assert display[f"{sc.truth.program_id}/{some_op}"] == some_op


@pytest.mark.parametrize("name", NAMES)
def test_step_source_and_count(written, name):
    sc, path = written[name]
    truth = sc.truth
    tl = read_timeline(path)
    trace = to_trace(tl)
    launches = device_launches(trace.h, trace.devices)
    st = detect_steps(trace, launches, detect_job(trace, launches))  # as the chain runs it: the job's spans too
    det = st.detection
    assert det.source == truth.expected_source, det.note
    assert det.found == truth.num_steps
    assert det.count == st.count == truth.steady_steps
    if truth.expected_source == "whole_capture":
        assert det.count == 1 and det.found == 0 and not det.dropped
        assert "whole capture is analysed as one pass" in det.note
        return
    assert [d.step for d in det.dropped] == [0, truth.num_steps - 1]
    assert f"dropped first and last of {truth.num_steps} steps" in det.note
    if name in SYNC:  # the host waits every step: the source's windows are the steps
        kept = truth.step_windows_ps[1:-1]
        if truth.expected_source == "annotation_spans":  # host spans: the same steps, from each call's dispatch on
            lengths = np.diff(st.host_windows, axis=1).ravel()
            assert lengths == pytest.approx([e - s for s, e in kept], rel=0.02)
        else:
            assert st.host_windows.tolist() == [list(w) for w in kept]
    if truth.expected_source == "xla_modules":
        assert truth.module_event in det.note


@pytest.mark.parametrize("name", NAMES)
def test_report_step_time_compute_and_precision(reports, written, name):
    """Step and compute times against the device truth; 16-bit share over kernels of known precision."""
    truth = written[name][0].truth
    rep = reports[name]
    assert rep.error is None
    d = jsonout.plain(rep)  # the report's dicts (step rows are a column table: dataclasses.asdict keeps it whole)
    json.loads(json.dumps(d, allow_nan=False))  # JSON-serializable, no NaN/inf
    assert d["steps"]["source"] == truth.expected_source
    assert d["steps"]["count"] == truth.steady_steps
    cards = {c["id"]: c for c in d["headline"]}
    share = cards["device_step_share"]
    assert share["detail"]["avg_step_ms"] == pytest.approx(truth.device_step_ps / 1e9, rel=0.01)
    assert share["detail"]["device_compute_ms"] == pytest.approx(truth.device_compute_ps / 1e9, rel=0.01)
    assert share["value"] == pytest.approx(truth.device_compute_ps / truth.device_step_ps, abs=0.01)
    sixteen = cards["sixteen_bit_share"]
    if name in UNKNOWN_PRECISION:
        assert sixteen["value"] is None and sixteen["detail"]["unknown_precision_share"] == pytest.approx(1.0)
    elif name in FP32:
        assert sixteen["value"] <= 0.05
    else:
        assert sixteen["value"] >= 0.8


@pytest.mark.parametrize("name", NAMES)
def test_report_diagnosis_follows_truth(reports, written, name):
    """The top warning/critical finding is one the truth expects; healthy scenarios raise none; expect_not stays quiet."""
    truth = written[name][0].truth
    bad = _bad(reports[name])
    if truth.expect_top:
        assert bad and bad[0].rule in truth.expect_top, [(f.rule, f.severity) for f in bad]
    else:
        assert not bad, [(f.rule, f.severity) for f in bad]
    assert not {f.rule for f in bad} & set(truth.expect_not)


@pytest.mark.parametrize("name", NAMES)
def test_savings_add_up(reports, name):
    from tests.support.savings_checks import savings_problems

    rep = reports[name]
    assert not savings_problems(name, rep.findings, rep.achievable, rep.breakdown_ms)


@pytest.mark.parametrize("name", sorted(SYNC))
def test_sync_loop_gap_is_the_host_wait(reports, written, name):
    """The ~2.5 ms the host spends on the loss and the next batch is idle GPU between device steps (breakdown 'other')."""
    truth = written[name][0].truth
    d = jsonout.plain(reports[name])
    gap_ms = truth.gpu_idle_between_steps_ps / 1e9
    accounted = d["breakdown_ms"]["other"] + d["breakdown_ms"]["input_wait"] + d["breakdown_ms"]["launch_wait"]
    assert accounted == pytest.approx(gap_ms, rel=0.1)
    assert d["breakdown_ms"]["other"] == pytest.approx(2.5, rel=0.05)  # the generator's between_us
    per_gpu: dict[str, list[int]] = {}
    for r in d["step_rows"]:
        per_gpu.setdefault(r["gpu"], []).append(r["step"])
    assert all(sorted(v) == list(range(1, truth.num_steps - 1)) for v in per_gpu.values()), per_gpu


def _xprof_2_24() -> bool:
    try:
        return importlib.metadata.version("xprof").startswith("2.24")
    except importlib.metadata.PackageNotFoundError:
        return False


def test_stock_converter_parses_them(written, reports):
    """What the stock converter makes of the generated files (xprof 2.24.2):

    * kernel_stats counts every kernel of the capture (memsets are not kernels to it);
    * without host step markers or XLA Modules grouping (the step-source
      scenarios but ``jax_step_annotation``): "No step time measured";
    * with ``train`` markers, its step time is within 10% of ours, as on the
      real files (scripts/real_check.py).
    """
    stock_tool = pytest.importorskip("tests.support.stock_tool")
    pytest.importorskip("xprof.convert.raw_to_tool_data")
    for name in NAMES:
        sc, path = written[name]
        truth = sc.truth
        out = stock_tool.stock_tools([path], ("overview_page", "kernel_stats"))
        ov = out["overview_page"]
        assert isinstance(ov, list) and len(ov) >= 4
        ks = out["kernel_stats"]
        table = ks[0] if isinstance(ks, list) else ks
        cols = [c["id"] for c in table["cols"]]
        occ = sum(r["c"][cols.index("occurrences")]["v"] for r in table.get("rows") or [])
        kernels = sum(n for k, n in truth.kernel_counts.items() if not k.startswith("Memset"))
        assert occ == kernels, name  # memsets are not kernels to kernel_stats
        if not _xprof_2_24():
            continue
        rows = ov[1].get("rows") or []
        statement = ov[3]["p"]["statement"]
        if truth.expected_source != "trace_train":
            assert rows == [] and statement.startswith("No step time measured"), name
            continue
        stock_step = float(ov[1]["p"]["steptime_ms_average"])
        ours = {c.id: c for c in reports[name].headline}["device_step_share"].detail["avg_step_ms"]
        assert stock_step == pytest.approx(ours, rel=0.10), name


# --- op attribution: the HLO op behind each kernel, not the `XlaModule:` annotation -------------------------------


def test_hlo_op_types_and_tensor_core_eligibility():
    from tb_gpu_advisor import frameworks
    from tb_gpu_advisor.frameworks import xla

    assert xla.is_xla_module_annotation("XlaModule:") and xla.is_xla_module_annotation("XlaModule:#hlo_module=jit_f#")
    assert not xla.is_xla_module_annotation("model/dense/MatMul:MatMul") and not xla.is_xla_module_annotation("")
    assert xla.hlo_op_type("cublas-gemm.3") == "cublas-gemm"
    assert xla.hlo_op_type("loop_add_fusion.2") == "loop_add_fusion"
    assert xla.hlo_op_type("%dot.1") == "dot" and xla.hlo_op_type("fusion") == "fusion"
    for t in ("dot", "cublas-gemm", "cublas-lt-matmul", "gemm_fusion", "triton_gemm", "convolution", "cudnn-conv",
              "custom-call", "XlaDot", "XlaDotV2", "XlaConv", "XlaConvV2", "XlaEinsum", "MatMul", "Conv2D"):
        assert frameworks.tc_eligible_type(t), t
    for t in ("fusion", "loop_add_fusion", "loop_convert_fusion", "input_reduce_fusion", "copy", "transpose",
              "AddV2", "Relu", ""):
        assert not frameworks.tc_eligible_type(t), t
    assert xla.hlo_op_class("loop_multiply_fusion") == "elementwise fusion"
    assert xla.hlo_op_class("input_reduce_fusion") == "reduction fusion"
    assert xla.hlo_op_class("cublas-gemm") == "matmul" and xla.hlo_op_class("convolution") == "conv"


@pytest.mark.parametrize("name", NAMES)
def test_kernels_and_ops_are_attributed_to_hlo_ops(reports, written, name):
    """Every kernel's `tf_op` is `XlaModule:`; the tables show `<module>/<hlo_op>` (or the graph it ran in)."""
    truth = written[name][0].truth
    rep = reports[name]
    krows = [dict(zip(rep.kernels.columns, r)) for r in rep.kernels.rows]
    assert krows and all(r["op"] != "XlaModule" for r in krows)
    gemm_names = {n for n in truth.kernel_counts if n.startswith(("nvjet_", "sm80_xmma_gemm", "void cutlass"))
                  or n == "gemm_fusion_dot"}
    for r in krows:
        module, hlo_op = r["op"].split("/", 1)
        assert module.startswith("jit_"), r
        if truth.command_buffers:
            assert hlo_op == "command_buffer_1 (CUDA graph)" and r["op type"] == "command_buffer_1", r
        else:
            assert hlo_op in truth.hlo_ops and r["op type"] == hlo_op.rsplit(".", 1)[0], r
        # GEMMs are Tensor-Core eligible by kernel name even when the op (a graph) says nothing
        assert r["TC eligible"] is (r["kernel"] in gemm_names), r
        if r["kernel"].startswith("nvjet_sm90_tst"):
            assert r["tensor core"] is True and r["precision"] == "bf16", r
        if "ffma" in r["kernel"] or "simt" in r["kernel"]:
            assert r["tensor core"] is False and r["precision"] == "fp32", r
    orows = [dict(zip(rep.ops.columns, r)) for r in rep.ops.rows]
    assert orows and all(r["on device"] for r in orows)
    # the kernels of the ops add up to every kernel of the kept steps
    assert sum(r["kernels"] for r in orows) == sum(r["count"] for r in krows)


def test_jax_fp32_gemms_without_tensor_cores_are_reported(tmp_path):
    """JAX fp32 SIMT GEMMs (cuBLAS sgemm, no Tensor Cores): tensor_core_unused must see them as eligible."""
    from synthetic.jaxcapture import JaxCapture, mlp_train_step

    ks = [dataclasses.replace(k, name="ampere_sgemm_128x64_nn", dtype="f32") if k.gemm else k for k in mlp_train_step(4)]
    gemm_ops = {k.hlo_op.rsplit(".", 1)[0] for k in ks if k.gemm}
    cap = JaxCapture(seed=1)
    for _ in range(8):
        cap.call(ks)
    path = tmp_path / "jaxhost.xplane.pb"
    cap.finish().write(path)
    rep = analyze_host(SimpleNamespace(host="jaxhost", path=str(path)))
    found = {f.rule: f for f in rep.findings}
    assert "tensor_core_unused" in found and found["tensor_core_unused"].severity == "critical"
    tc = found["tensor_core_unused"]
    assert tc.metric.value > 0.8
    table = tc.evidence[0]
    kernel, op_type = table.columns.index("kernel"), table.columns.index("op type")
    assert table.rows and {r[kernel] for r in table.rows} == {"ampere_sgemm_128x64_nn"}
    assert {r[op_type] for r in table.rows} == gemm_ops
    assert found["mixed_precision_off"].severity == "critical"


# --- gaps between steps: the same capture gives the same gaps whatever source defined its steps -------------------


def test_step_gaps_are_the_same_for_every_step_source(written, reports):
    """`jax_xla_modules` (device-defined steps), `jax_raw` (host module executions), `jax_raw_no_module_events` (GPU
    busy clusters) and `jax_step_annotation` (host markers) lay out the same steps with the same host wait between
    them: the guide's §1.2.1 gap must be found in all four, with the same numbers.  The finding's share leaves out
    the gap's input wait and dispatch time, which input_bound and launch_bound report."""
    found = {}
    for name in sorted(SYNC):
        truth = written[name][0].truth
        f = {x.rule: x for x in reports[name].findings}
        assert "step_gaps" in f, (name, sorted(f))
        g = f["step_gaps"]
        assert g.severity == "critical", name
        det = g.metric.detail
        assert det["avg_gap_ms"] == pytest.approx(truth.gpu_idle_between_steps_ps / 1e9, rel=0.02), name
        own = det["avg_gap_ms"] - det["input_wait_ms"] - det["launch_ms"]
        assert g.metric.value == pytest.approx(own / (truth.device_step_ps / 1e9), rel=0.02), name
        longest = g.evidence[1]
        # one gap per pair of consecutive kept steps, and the parts of the gaps to the dropped steps either side that
        # the first and last kept steps hold (h37-left46: the mean is per kept step, over the time the steps hold)
        assert truth.steady_steps - 1 <= len(longest.rows) <= truth.steady_steps + 1
        found[name] = (det["avg_gap_ms"], g.metric.value)
    ref = found["jax_raw"]
    for name, (gap, share) in found.items():
        # the `train` marker itself costs the host ~17 us a step: same gaps within 2%
        assert gap == pytest.approx(ref[0], rel=0.02) and share == pytest.approx(ref[1], rel=0.02), found


def test_eager_chain_ranks_above_the_dispatch_wait_with_the_fused_kernel_time(reports, written):
    """Issue #18 class 6, truth by construction: 40 un-jitted element-wise ops on f32[4096,4096], one 50 us kernel
    each, per step.  jit would fuse them into about one kernel: eager_execution comes first, its saving counts the
    39 x 50 us of fused kernel time on top of the dispatch wait, and its evidence is the chain.  launch_bound's
    title says the GPU waits for dispatch (the kernels are not small) and offers no 'make kernels bigger' fix."""
    from synthetic.xla_kernels import EAGER_BIG_US

    rep = reports["jax_eager_chain"]
    fs = {f.rule: f for f in rep.findings}
    assert _bad(rep)[0].rule == "eager_execution"
    e, lb = fs["eager_execution"], fs["launch_bound"]
    fused = e.metric.detail["fused_kernel_saving_ms_per_step"]
    assert fused == pytest.approx(39 * EAGER_BIG_US / 1000, rel=0.1)
    assert e.saving.ms_per_step == pytest.approx(lb.saving.ms_per_step + fused, rel=0.1)
    chain = e.evidence[0]
    assert chain.title == "Most frequent fusible kernel chains" and chain.rows[0][1] == 40
    assert "dispatch each op" in lb.title and "small kernels" not in lb.title
    assert not any("concatenate small tensors" in a.text for a in lb.actions)
    assert "40 ops per step run eagerly" in e.summary and "@jax.jit" in e.actions[0].snippet


def test_jitted_captures_have_no_eager_ops(reports):
    """A jitted step runs many kernels per call: none of its calls is an op dispatched by itself."""
    for name in ("jax_healthy_bf16", "jax_healthy_bf16_nocb", "jax_input_bound", "jax_fp32_highest"):
        assert "eager_execution" not in {f.rule for f in reports[name].findings}, name


def test_generated_jax_captures_carry_their_hlo_and_its_flops(reports):
    """Generators follow reality: a generated JAX step carries its module's HLO as real captures do (``Hlo Proto`` on
    ``/host:metadata``), so MFU is read from it: the bf16 MLP's 3 x 4 - 1 GEMMs of 2 x 4096^3 FLOPs (issue #20)."""
    for name in ("jax_healthy_bf16", "jax_healthy_bf16_nocb", "jax_input_bound"):
        mfu = next(c for c in reports[name].headline if c.id == "mfu")
        assert mfu.detail["source"] == "hlo", name
        assert mfu.detail["flops_per_step"] == pytest.approx(11 * 2 * 4096 ** 3, rel=1e-6), name
    # without command buffers every GEMM kernel finds its HLO instruction: a roofline per shape
    roof = reports["jax_healthy_bf16_nocb"].roofline
    assert roof is not None and roof.rows and all(r[2] == "bf16" for r in roof.rows)


def test_two_host_jax_job_sizes_its_all_reduce_from_the_hlo(tmp_path):
    """Issue #19, truth by construction: two hosts (XPlane files) of one data-parallel JAX job, a 128 MiB gradient
    all-reduce of 40 ms per step between them.  The message size and group are only in the HLO (replica group
    {0, 1}); the job view gets both hosts as ranks, the bus bandwidth 2(n-1)/n x bytes / time within 10%, and the
    slow link comes first with that number."""
    from synthetic.jaxcapture import jax_dp_2host_slow_link
    from tb_gpu_advisor.discover.logdir import discover
    from tb_gpu_advisor.metrics.job import job_view
    
    job = jax_dp_2host_slow_link()
    job.write(tmp_path)
    (s,) = discover(str(tmp_path))
    rep = session_report(s)
    assert [h.host for h in rep.hosts] == ["node0", "node1"] and len(rep.ranks.rows) == 2
    size, bus = job_view(rep.hosts).bus_bandwidth("AllReduce")
    assert size == job.extra["bytes_per_call"]
    assert bus / 1e9 == pytest.approx(job.extra["bus_GBps"], rel=0.1)
    top = rep.findings[0]
    assert top.rule == "comm_bandwidth_low" and "between hosts" in top.summary
    assert top.metric.detail["bytes_per_call"] == job.extra["bytes_per_call"]
