"""JAX/XLA-shaped GPU captures (synthetic/jaxcapture.py): reader, step source, analysis, stock tool.

Variants and the step source each must yield:
``jax_xla_modules`` -> ``xla_modules``; ``jax_raw`` -> ``xla_module_launches``;
``jax_raw_no_module_events`` -> ``gpu_busy_clusters``; ``jax_no_steps`` -> ``whole_capture``;
``jax_step_annotation`` -> ``trace_train``.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
from types import SimpleNamespace

import numpy as np
import pytest

from tb_gpu_advisor.analyze import analyze_host
from tb_gpu_advisor.metrics.events import all_device_events, host_events
from tb_gpu_advisor.reader import read_timeline
from tb_gpu_advisor.steps import detect_steps
from tb_gpu_advisor.synthetic.jaxcapture import GEMM_BF16, JAX_SCENARIOS, THREAD_ID_HLO_MODULE, THREAD_ID_HLO_OP
from tests.reference_parse import assert_matches_reference

NAMES = sorted(JAX_SCENARIOS)


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    root = tmp_path_factory.mktemp("jax")
    out = {}
    for name, fn in JAX_SCENARIOS.items():
        sc = fn()
        out[name] = (sc, str(sc.write(root)[0]))
    return out


def _names(line) -> list[str]:
    return [str(n) for n in line.names()]


@pytest.mark.parametrize("name", NAMES)
def test_reader_equals_full_parse_and_jax_structure(written, name):
    sc, path = written[name]
    truth = sc.truth
    tl = read_timeline(path)
    assert assert_matches_reference(tl, path) == tl.num_events > 0
    assert [p.name for p in tl.planes] == ["/host:CPU", "/device:GPU:0", "Task Environment"]

    python = tl.plane("/host:CPU").line("python3")
    names = _names(python)
    calls = len([w for w in truth.step_windows_ps]) if truth.expected_source != "whole_capture" else 1
    fn = truth.module.removeprefix("jit_")
    assert names.count(f"PjitFunction({fn})") == calls
    assert names.count(f"{truth.module}:XLA GPU module") == (0 if name == "jax_raw_no_module_events" else calls)
    assert names.count("PjRtCApiLoadedExecutable::Execute") == calls
    assert names.count("train") == (calls if truth.expected_source == "trace_train" else 0)

    gpu = tl.plane("/device:GPU:0")
    compute = gpu.line("Stream #13(Compute)")
    assert compute is not None and gpu.line("Stream #14(MemcpyH2D)") is not None
    # every kernel carries the parsed XLA annotation and the CUPTI stats
    for stat in ("hlo_op", "hlo_module", "program_id", "correlation_id", "kernel_details", "tf_op"):
        assert compute.has_stat(stat).all(), stat
    mods = {gpu.string(int(i)) for i in np.unique(compute.str_stat("hlo_module", inherit=False))}
    assert mods == {truth.module}
    assert set(compute.int_stat("program_id", inherit=False).tolist()) == {truth.program_id}
    ops = {gpu.string(int(i)) for i in np.unique(compute.str_stat("hlo_op", inherit=False))}
    assert ops == truth.hlo_ops
    details = {gpu.string(int(i)) for i in np.unique(compute.str_stat("kernel_details", inherit=False))}
    assert all(d.startswith("regs:") and "occ_pct:" in d for d in details)
    counts: dict[str, int] = {}
    for n in _names(compute):
        counts[n] = counts.get(n, 0) + 1
    assert counts == truth.kernel_counts and counts[GEMM_BF16] > 0

    # host launch record for every device event (correlation_id), named after what it launched
    host_corr = dict(zip(python.int_stat("correlation_id", inherit=False).tolist(), names))
    for line in gpu.lines:
        if line.name.startswith("Stream #"):
            for c, n in zip(line.int_stat("correlation_id", inherit=False).tolist(), _names(line)):
                assert host_corr[c] == n

    xm, xo = gpu.line("XLA Modules"), gpu.line("XLA Ops")
    if truth.derived_lines:
        assert xm is not None and xo is not None
        assert set(_names(xm)) == {truth.module_event} == {f"{truth.module}({truth.program_id})"}
        assert len(xm) == truth.num_steps
        assert len(xo) == len(compute)
        assert {n.split("/", 1)[0] for n in _names(xo)} == {str(truth.program_id)}
        assert {n.split("/", 1)[1] for n in _names(xo)} == truth.hlo_ops
    else:
        assert xm is None and xo is None


def test_derived_line_ids_are_the_stock_derived_ids(written):
    from tb_gpu_advisor.xplane_schema import message_class

    sc, path = written["jax_xla_modules"]
    space = message_class("XSpace").FromString(open(path, "rb").read())
    gpu = next(p for p in space.planes if p.name == "/device:GPU:0")
    ids = {ln.name: ln.id for ln in gpu.lines}
    assert ids["XLA Modules"] == THREAD_ID_HLO_MODULE and ids["XLA Ops"] == THREAD_ID_HLO_OP
    display = {m.value.name: m.value.display_name for m in gpu.event_metadata}
    some_op = sorted(sc.truth.hlo_ops)[0]
    assert display[f"{sc.truth.program_id}/{some_op}"] == some_op


@pytest.mark.parametrize("name", NAMES)
def test_step_source_count_and_windows(written, name):
    sc, path = written[name]
    truth = sc.truth
    tl = read_timeline(path)
    st = detect_steps(tl, host_events(tl), all_device_events(tl))
    det = st.detection
    assert det.source == truth.expected_source, det.note
    assert det.found == truth.num_steps
    assert det.count == st.count == truth.steady_steps
    windows = truth.step_windows_ps
    kept = windows[1:-1] if len(windows) > 5 else windows
    assert st.host_windows.tolist() == [list(w) for w in kept]
    assert st.window(0).tolist() == [list(w) for w in kept]
    if truth.expected_source == "whole_capture":
        assert det.count == 1 and det.found == 0 and not det.dropped
        assert "whole capture is analysed as one step" in det.note
    else:
        assert [d.step for d in det.dropped] == [0, truth.num_steps - 1]
        assert f"dropped first and last of {truth.num_steps} steps" in det.note
    if truth.expected_source == "xla_modules":
        assert truth.module_event in det.note


@pytest.mark.parametrize("name", NAMES)
def test_analyze_host_report(written, name):
    sc, path = written[name]
    truth = sc.truth
    rep = analyze_host(SimpleNamespace(host="jaxhost", path=path))
    assert rep.error is None
    d = dataclasses.asdict(rep)
    json.loads(json.dumps(d, allow_nan=False))  # JSON-serializable, no NaN/inf
    assert d["steps"]["source"] == truth.expected_source
    assert d["steps"]["count"] == truth.steady_steps
    cards = {c["id"]: c for c in d["headline"]}
    share = cards["device_step_share"]
    assert share["detail"]["avg_step_ms"] == pytest.approx(truth.step_time_ps / 1e9, rel=0.01)
    assert share["detail"]["device_compute_ms"] == pytest.approx(truth.device_compute_ps / 1e9, rel=0.01)
    assert share["value"] == pytest.approx(truth.device_compute_ps / truth.step_time_ps, abs=0.01)
    assert cards["sixteen_bit_share"]["value"] > 0.8  # bf16 GEMMs dominate the kernel time
    assert cards["input_wait_share"]["value"] == 0.0  # no tf.data in JAX
    if truth.expected_source != "whole_capture":
        # the host's per-step sync + data prep leaves the GPU idle ~2.5 ms per step
        assert d["breakdown_ms"]["other"] == pytest.approx(truth.gpu_idle_between_steps_ps / 1e9, rel=0.05)
        per_gpu = {}
        for r in d["step_rows"]:
            per_gpu.setdefault(r["gpu"], []).append(r["step"])
        assert all(sorted(v) == list(range(1, truth.num_steps - 1)) for v in per_gpu.values()), per_gpu


def _xprof_2_24() -> bool:
    try:
        return importlib.metadata.version("xprof").startswith("2.24")
    except importlib.metadata.PackageNotFoundError:
        return False


def test_stock_converter_parses_them(written):
    """What the stock converter says (xprof 2.24.2, measured):

    * no host step marker (``jax_xla_modules``, ``jax_raw``, ``jax_raw_no_module_events``, ``jax_no_steps``): "No step time
      measured" -- no ``group_id`` on GPU events, and it does not use ``XLA Modules`` for steps;
    * ``jax_step_annotation``: ``train`` + ``_r`` roots are grouped: 6 of 8 steps kept, but the
      step time is the device-side span (~2.3 ms), not the 4.8 ms step (host gap not counted),
      bf16 counted as 32-bit (16-bit 0.0%);
    * kernel_stats: every kernel counted, op name ``XlaModule`` (the ``tf_op`` annotation).
    """
    stock_tool = pytest.importorskip("tests.stock_tool")
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
        assert occ == sum(truth.kernel_counts.values()), name
        if not _xprof_2_24():
            continue
        rows = ov[1].get("rows") or []
        statement = ov[3]["p"]["statement"]
        if truth.expected_source == "trace_train":
            assert len(rows) == truth.steady_steps
            stock_step = float(ov[1]["p"]["steptime_ms_average"])
            assert stock_step < truth.step_time_ps / 1e9 - 2.0  # blind spot: host gap not in its step
        else:
            assert rows == [] and statement.startswith("No step time measured"), name


# --- op attribution: the HLO op behind each kernel, not the `XlaModule:` annotation -------------------------------


def test_hlo_op_types_and_tensor_core_eligibility():
    from tb_gpu_advisor import kernel_classes as kc

    assert kc.is_xla_module_annotation("XlaModule:") and kc.is_xla_module_annotation("XlaModule:#hlo_module=jit_f#")
    assert not kc.is_xla_module_annotation("model/dense/MatMul:MatMul") and not kc.is_xla_module_annotation("")
    assert kc.hlo_op_type("cublas-gemm.3") == "cublas-gemm"
    assert kc.hlo_op_type("loop_add_fusion.2") == "loop_add_fusion"
    assert kc.hlo_op_type("%dot.1") == "dot" and kc.hlo_op_type("fusion") == "fusion"
    for t in ("dot", "cublas-gemm", "cublas-lt-matmul", "gemm_fusion", "triton_gemm", "convolution", "cudnn-conv",
              "custom-call", "XlaDot", "XlaDotV2", "XlaConv", "XlaConvV2", "XlaEinsum", "MatMul", "Conv2D"):
        assert kc.tc_eligible_type(t), t
    for t in ("fusion", "loop_add_fusion", "loop_convert_fusion", "input_reduce_fusion", "copy", "transpose",
              "AddV2", "Relu", ""):
        assert not kc.tc_eligible_type(t), t
    assert kc.hlo_op_class("loop_multiply_fusion") == "elementwise fusion"
    assert kc.hlo_op_class("input_reduce_fusion") == "reduction fusion"
    assert kc.hlo_op_class("cublas-gemm") == "matmul" and kc.hlo_op_class("convolution") == "conv"


@pytest.mark.parametrize("name", NAMES)
def test_kernels_and_ops_are_attributed_to_hlo_ops(written, name):
    """Every kernel's `tf_op` is `XlaModule:`; the op tables must show `<module>/<hlo_op>` with an HLO op type."""
    sc, path = written[name]
    truth = sc.truth
    rep = analyze_host(SimpleNamespace(host="jaxhost", path=path))
    kcols = rep.kernels.columns
    krows = [dict(zip(kcols, r)) for r in rep.kernels.rows]
    assert krows and all(r["op"] != "XlaModule" for r in krows)
    for r in krows:
        module, hlo_op = r["op"].split("/", 1)
        assert module == truth.module and hlo_op in truth.hlo_ops
        assert r["op type"] == hlo_op.rsplit(".", 1)[0]
        gemm = r["kernel"] == GEMM_BF16
        if gemm:
            assert r["op type"] == "cublas-gemm"
        assert r["TC eligible"] is gemm, r  # GEMMs are Tensor-Core eligible, fusions are not
    ocols = rep.ops.columns
    orows = [dict(zip(ocols, r)) for r in rep.ops.rows]
    assert {r["op"].split("/", 1)[1] for r in orows} <= truth.hlo_ops
    assert len(orows) == min(len(truth.hlo_ops), len(orows)) > 1  # not one `XlaModule` op
    gemm_ops = [r for r in orows if r["type"] == "cublas-gemm"]
    assert gemm_ops and all(r["TC eligible"] and r["tensor core share"] == 1.0 for r in gemm_ops)
    assert all(r["on device"] for r in orows)
    # the kernels of the ops add up to every kernel of the kept steps
    assert sum(r["kernels"] for r in orows) == sum(r["count"] for r in krows)
    assert "tensor_core_unused" not in {f.rule for f in rep.findings}  # bf16 xmma GEMMs use the Tensor Cores


def test_jax_fp32_gemms_without_tensor_cores_are_reported(tmp_path):
    """JAX fp32 SIMT GEMMs (cuBLAS sgemm, no Tensor Cores): tensor_core_unused must see them as eligible."""
    from tb_gpu_advisor.synthetic.jaxcapture import JaxCapture, mlp_train_step

    ks = [dataclasses.replace(k, name="ampere_sgemm_128x64_nn", dtype="f32") if k.gemm else k for k in mlp_train_step(4)]
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
    assert {r[op_type] for r in table.rows} == {"cublas-gemm"}
    assert found["mixed_precision_off"].severity == "critical"


# --- gaps between steps: the same capture gives the same gaps whatever source defined its steps -------------------


def test_step_gaps_are_the_same_for_every_step_source(written):
    """`jax_xla_modules` (device-defined steps: a module spans only its kernels, so the next step's H2D copy lies at
    the end of the previous step's window), `jax_raw` (host module executions), `jax_raw_no_module_events` (GPU busy
    clusters) and `jax_step_annotation` (host markers) lay out the same steps with the same ~2.5 ms host sync between
    them: the guide's §1.2.1 gap must be found in all four, with the same numbers."""
    found = {}
    for name in ("jax_xla_modules", "jax_raw", "jax_raw_no_module_events", "jax_step_annotation"):
        sc, path = written[name]
        truth = sc.truth
        rep = analyze_host(SimpleNamespace(host="jaxhost", path=path))
        f = {x.rule: x for x in rep.findings}
        assert "step_gaps" in f, (name, sorted(f))
        g = f["step_gaps"]
        assert g.severity == "critical", name
        avg = g.metric.detail["avg_gap_ms"]
        # the idle between the loss D2H of step k and the batch H2D of step k+1 (truth: between device spans)
        assert avg == pytest.approx(truth.gpu_idle_between_steps_ps / 1e9, rel=0.02), name
        assert g.metric.value == pytest.approx(avg / (truth.step_time_ps / 1e9), rel=0.02), name
        longest = g.evidence[1]
        assert len(longest.rows) == truth.steady_steps - 1  # one gap per pair of consecutive kept steps
        found[name] = (g.severity, round(avg, 3), round(g.metric.value, 3), [r[:3] for r in longest.rows])
    assert all(v == found["jax_raw"] for v in found.values()), found
