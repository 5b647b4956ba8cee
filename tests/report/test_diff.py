"""The diff of two captures (issue #11): pairs with constructed deltas, the real H100 pairs, the CLI's exit codes.

Truth comes from construction (a scenario and its ``fixed=True`` twin differ by exactly the guide's fix; two
seeds of one scenario differ by noise only) or from the real captures' TRUTH.json (``input_bound`` is
``healthy_bf16`` plus a 12 ms host stall).
"""

from __future__ import annotations

from tb_gpu_advisor import devices

import json
import math
import re
import shutil
from pathlib import Path

import pytest

from synthetic.tfcapture import V100
from synthetic.calibration import REAL_PAIRS, real_rows, synthetic_rows
from synthetic.scenarios import FIXES, SCENARIOS
from tb_gpu_advisor.cli import main as cli
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.report.diff import DIFF_VERSION, Diff, DiffError, Side, Spread, diff_reports, noise_ms, step_change
from tb_gpu_advisor.report.diff_render import to_markdown, to_text
from tb_gpu_advisor.runtime import pipeline
from tests.support.paths import REPO
from tests.support.real_checks import REAL_JAX_SET

REAL = Path(REAL_JAX_SET)
needs_real = pytest.mark.skipif(not (REAL / "input_bound").is_dir(), reason=f"real captures not present: {REAL}")


@pytest.fixture(scope="module")
def logdir(tmp_path_factory) -> Path:
    """Runs: every FIXES scenario before/after, two seeds of ideal, and multi_host."""
    d = tmp_path_factory.mktemp("diff_logdir")
    for name in ("input_bound", "fp32_no_tensor_cores", "multi_gpu_gpu0_oversubscribed"):
        SCENARIOS[name]().write(d, run=f"{name}__before")
        SCENARIOS[name](fixed=True).write(d, run=f"{name}__after")
    SCENARIOS["ideal"](seed=0).write(d, run="ideal_a")
    SCENARIOS["ideal"](seed=7).write(d, run="ideal_b")
    SCENARIOS["multi_host"]().write(d, run="multi_host")
    return d


def report(logdir: Path, run: str):
    from tb_gpu_advisor.discover import logdir as discovery

    s = next(s for s in discovery.discover(str(logdir)) if s.run == run)
    return pipeline.analyze_session(s.run, s.session, s.hosts)


def run_cli(argv: list[str], capsys) -> tuple[int, str, str]:
    rc = cli.main(["diff", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


# --------------------------------------------------------------------------- constructed pairs


def test_every_fix_is_reported_fixed_and_its_saving_calibrated(tmp_path):
    """Each scenario against its fixed twin: the rule the fix targets is 'fixed', and the predicted saving is
    within ``diff.calibration_tolerance`` of the realised step-time change (known by construction)."""
    rows = synthetic_rows(str(tmp_path))
    assert {r.pair.split(" -> ")[0] for r in rows} == set(FIXES)
    for r in rows:
        assert r.expected_fixed, f"{r.pair}: {FIXES[r.pair.split(' -> ')[0]]} not in fixed {r.fixed}"
        assert r.realised_ms is not None and r.realised_ms > 0, r
        assert r.within, f"{r.pair}: predicted {r.predicted_ms} ms vs realised {r.realised_ms} ms (ratio {r.ratio})"


def test_fix_applied_input_bound(logdir):
    d = diff_reports(report(logdir, "input_bound__before"), report(logdir, "input_bound__after"))
    assert d.step.verdict == "faster" and d.step.beyond_noise is True
    # the constructed delta: 6 ms of input wait per step became 25 us
    assert d.step.delta_ms == pytest.approx(-(6.0 - 0.025), rel=0.05)
    by = {c.key: c for c in d.breakdown}
    assert by["input"].delta == pytest.approx(-(6.0 - 0.025), rel=0.05)
    assert abs(by["compute"].delta) < 0.05 * by["compute"].base  # the model did not change
    assert [(f.rule, f.status, f.new_severity) for f in d.findings] == [("input_bound", "fixed", None)]
    assert d.findings[0].predicted_ms == pytest.approx(-by["input"].delta, rel=0.05)  # the input wait it named
    assert d.calibration is not None and d.calibration.findings == ["input_bound"] and d.calibration.within


def test_regression_introduced_is_slower_new_and_gated(logdir):
    """The fixed twin as base, the stalled capture as new: a regression of ~145%."""
    d = diff_reports(report(logdir, "input_bound__after"), report(logdir, "input_bound__before"))
    assert d.step.verdict == "slower" and d.step.delta_share > 1.0
    assert [(f.rule, f.status) for f in d.findings] == [("input_bound", "new")]
    assert d.calibration is None  # nothing was fixed: no prediction to compare
    assert d.regressed(5.0) and d.regressed(100.0) and not d.regressed(1000.0)


def test_identical_runs_show_no_change(logdir):
    r = report(logdir, "input_bound__before")
    d = diff_reports(r, r)
    assert d.step.delta_ms == 0 and d.step.verdict == "unchanged" and d.step.beyond_noise is False
    assert {f.status for f in d.findings} == {"still"}
    assert all(c.delta == 0 for c in d.breakdown + d.kernel_classes + d.kernels + d.ops)
    assert all(m.better is None for m in d.headline)
    assert not d.regressed(0.0)


def test_two_seeds_of_one_capture_differ_by_noise_only(logdir):
    d = diff_reports(report(logdir, "ideal_a"), report(logdir, "ideal_b"))
    assert d.step.delta_ms != 0  # jitter differs between the seeds ...
    assert d.step.verdict == "unchanged" and d.step.beyond_noise is False  # ... and stays inside the noise
    assert not d.regressed(0.0)
    assert d.findings == []


def test_kernel_changes_follow_the_fix(logdir):
    """fp32 SGEMMs replaced by fp16 Tensor Core GEMMs: sgemm kernels removed, TC kernels added, MatMul time down."""
    d = diff_reports(report(logdir, "fp32_no_tensor_cores__before"), report(logdir, "fp32_no_tensor_cores__after"))
    status = {c.key: c.status for c in d.kernels}
    # the tables hold the top 25 (kernel, op) rows: a kernel missing from a full table only "left" the top
    assert status["volta_sgemm_128x64_nn"] == "left_top" and status["volta_fp16_s884gemm_fp16_128x128_ldg8_f2f_nn"] == "entered_top"
    mm = next(c for c in d.kernel_classes if c.key == "matmul/conv")
    # 36 GEMMs of 420 us (6 of them 300 us) per step, at the V100's fp16/fp32 peak ratio (the rule's assumption)
    sp = devices.peak_flops(V100.name, V100.cc, devices.P_FP16).value / devices.peak_flops(V100.name, V100.cc,
                                                                                           devices.P_FP32).value
    assert mm.delta == pytest.approx(-(mm.base * (1 - 1 / sp)), rel=0.02)
    cards = {m.id: m for m in d.headline}
    assert cards["sixteen_bit_share"].better is True and cards["sixteen_bit_share"].new > 0.9


def test_per_gpu_changes(logdir):
    d = diff_reports(report(logdir, "multi_gpu_gpu0_oversubscribed__before"),
                     report(logdir, "multi_gpu_gpu0_oversubscribed__after"))
    assert [g.gpu for g in d.gpus] == [0, 1, 2, 3]
    comp = {g.gpu: next(c for c in g.breakdown if c.key == "compute") for g in d.gpus}
    assert comp[0].delta < -2.0  # GPU0 lost its extra ~2.4 ms of work ...
    assert all(comp[g].delta > 0.5 for g in (1, 2, 3))  # ... a quarter of it went to each GPU
    assert [(f.rule, f.status) for f in d.findings] == [("gpu_imbalance", "fixed")]


def test_host_pairing_and_unknown_host(logdir):
    r = report(logdir, "multi_host")
    d = diff_reports(r, r, host="worker0")
    assert d.base.host == d.new.host == "worker0"
    d = diff_reports(r, r)
    slowest = max(r.hosts, key=lambda h: sum(v for v in h.breakdown_ms.values() if v)).host
    assert d.base.host == slowest and any("slowest host" in n for n in d.notes)
    with pytest.raises(DiffError, match="unknown host 'nope'.*worker0, worker1"):
        diff_reports(r, r, host="nope")


def test_noise_is_welch_with_a_run_to_run_floor():
    def side(step, n, std):
        return Side("r", "s", "r/s", "h", ["h"], None, step, Spread(n, step, std, step, step), None, "v")

    a, b = side(10.0, 20, 1.0), side(11.0, 30, 2.0)
    se = math.sqrt(1.0 / 20 + 4.0 / 30)
    assert noise_ms(a, b) == pytest.approx(T("diff.noise_z") * se)
    quiet = side(10.0, 20, 0.001)
    assert noise_ms(quiet, quiet) == pytest.approx(T("diff.noise_floor_share") * 10.0)
    assert step_change(quiet, side(10.05, 20, 0.001)).verdict == "unchanged"  # 0.5% < the 1% floor
    assert step_change(quiet, side(10.2, 20, 0.001)).verdict == "slower"
    one = Side("r", "s", "r/s", "h", ["h"], None, 10.0, Spread(1, 10.0, None, 10.0, 10.0), None, "v")
    s = step_change(one, side(10.5, 20, 0.1))
    assert s.noise_ms is None and s.beyond_noise is None and s.verdict == "slower"


def test_json_document(logdir):
    d = diff_reports(report(logdir, "input_bound__before"), report(logdir, "input_bound__after"))
    doc = json.loads(d.to_json())
    assert doc["diff_version"] == DIFF_VERSION
    assert set(doc) == {f for f in Diff.__dataclass_fields__}
    assert doc["step"]["verdict"] == "faster" and doc["calibration"]["findings"] == ["input_bound"]


def test_markdown_escapes_names(logdir, tmp_path):
    hostile = "<svg onload=alert(1)>|`x`"
    shutil.copytree(logdir / "input_bound__before", tmp_path / hostile)
    r = report(tmp_path, hostile)
    md = to_markdown(diff_reports(r, report(logdir, "input_bound__after")))
    assert "``<svg onload=alert(1)>|`x`/" in md  # the name as an inline code span: shown, never parsed
    assert "<svg" not in re.sub(r"(`+).+?\1", "", md)  # and nowhere outside one
    assert "| fixed |" in md


# --------------------------------------------------------------------------- CLI


def test_cli_one_logdir_exit_codes(logdir, capsys):
    rc, out, _ = run_cli([str(logdir), "--base", "input_bound__before", "--new", "input_bound__after",
                          "--fail-on-regression", "5"], capsys)
    assert rc == 0 and "faster" in out and "input_bound" in out and "PREDICTED VS REALISED" in out
    rc, _, err = run_cli([str(logdir), "--base", "input_bound__after", "--new", "input_bound__before",
                          "--fail-on-regression", "5"], capsys)
    assert rc == 1 and "regression" in err
    rc, *_ = run_cli([str(logdir), "--base", "input_bound__after", "--new", "input_bound__before"], capsys)
    assert rc == 0  # no gate asked for


def test_cli_noise_keeps_the_gate_closed(logdir, capsys):
    rc, out, _ = run_cli([str(logdir), "--base", "ideal_a", "--new", "ideal_b", "--fail-on-regression", "0"], capsys)
    assert rc == 0 and "no change beyond the noise" in out


def test_cli_run_session_two_logdirs_and_two_files(logdir, capsys):
    from tb_gpu_advisor.discover import logdir as discovery

    sessions = {s.run: s for s in discovery.discover(str(logdir))}
    before, after = sessions["input_bound__before"], sessions["input_bound__after"]
    rc, out, _ = run_cli([str(logdir), "--base", before.stock_run, "--new", after.stock_run, "--format", "json"], capsys)
    assert rc == 0 and json.loads(out)["base"]["session"] == before.session
    rc, out, _ = run_cli([before.path.rsplit("/plugins/", 1)[0], after.path.rsplit("/plugins/", 1)[0], "--format",
                          "json"], capsys)
    assert rc == 0 and json.loads(out)["step"]["verdict"] == "faster"
    rc, out, _ = run_cli([before.hosts[0].path, after.hosts[0].path, "--format", "markdown"], capsys)
    assert rc == 0 and out.startswith("### GPU Advisor diff:") and "| fixed |" in out


def test_cli_two_lone_xplane_files(logdir, tmp_path, capsys):
    """README: ``diff BASE.xplane.pb NEW.xplane.pb`` -- files copied out of their logdir (issue #36 item 4)."""
    from tb_gpu_advisor.discover import logdir as discovery

    sessions = {s.run: s for s in discovery.discover(str(logdir))}
    base, new = tmp_path / "base.xplane.pb", tmp_path / "elsewhere" / "new.xplane.pb"
    new.parent.mkdir()
    shutil.copy(sessions["input_bound__before"].hosts[0].path, base)
    shutil.copy(sessions["input_bound__after"].hosts[0].path, new)
    rc, out, err = run_cli([str(base), str(new), "--format", "json"], capsys)
    assert rc == 0, err
    assert json.loads(out)["step"]["verdict"] == "faster"


@pytest.mark.parametrize("argv, message", [
    (["{d}"], "give both --base"),
    (["{d}", "--base", "nope", "--new", "ideal_a"], "'nope' is neither a run nor a session"),
    (["{d}", "--base", "ideal_a", "--new", "ideal_b", "--host", "nope"], "unknown host"),
    (["{d}", "{d}"], "pick one with --base/--new"),
    (["{d}/missing", "{d}"], "no such directory"),
    (["{d}/x.xplane.pb", "{d}/y.xplane.pb"], "x.xplane.pb: no such file"),
])
def test_cli_input_errors_exit_2(logdir, capsys, argv, message):
    rc, out, err = run_cli([a.format(d=logdir) for a in argv], capsys)
    assert rc == 2 and message in err and out == ""


def test_cli_failed_side_exits_2(logdir, tmp_path, capsys):
    bad = tmp_path / "bad" / "plugins" / "profile" / "2026_01_01_00_00_00"
    bad.mkdir(parents=True)
    (bad / "h.xplane.pb").write_bytes(b"\x08\x00not a profile")
    rc, _, err = run_cli([str(tmp_path / "bad"), str(logdir), "--new", "ideal_a"], capsys)
    assert rc == 2 and "base: host h could not be analysed" in err


def test_cli_reads_cached_reports_without_touching_profiles(logdir, capsys, monkeypatch):
    argv = [str(logdir), "--base", "input_bound__before", "--new", "input_bound__after", "--format", "json"]
    rc, first, _ = run_cli(argv, capsys)
    assert rc == 0

    def no_analysis(*a, **k):
        raise AssertionError("a cached report was analysed again")

    monkeypatch.setattr(pipeline, "analyze_session", no_analysis)
    rc, second, _ = run_cli(argv, capsys)
    assert rc == 0
    drop = lambda s: {k: v for k, v in json.loads(s).items() if k != "generated_at"}  # noqa: E731
    assert drop(first) == drop(second)


# --------------------------------------------------------------------------- real captures


@needs_real
def test_real_input_stall_fixed(capsys):
    """Issue #11's done-when: input_bound -> healthy_bf16 says the stall was fixed, with predicted next to
    realised; exit 0; swapped with --fail-on-regression 5: exit 1."""
    rc, out, _ = run_cli([str(REAL), "--base", "input_bound", "--new", "healthy_bf16", "--fail-on-regression", "5"],
                         capsys)
    assert rc == 0
    assert "fixed   critical -> -  14.9 ms -> -  Input-bound: the GPU waits for the input pipeline" in out
    assert ("fixed 'Input-bound: the GPU waits for the input pipeline': predicted saving 14.9 ms/step, realised "
            "15.5 ms/step") in out
    assert "input_bound" not in out.split("FINDINGS")[1].split("HEADLINE")[0]  # no rule id: the finding's words
    assert "collectives" not in out  # a breakdown category neither run has is left out (was "0.000 0.000 +0.000")
    rc, _, err = run_cli([str(REAL), "--base", "healthy_bf16", "--new", "input_bound", "--fail-on-regression", "5"],
                         capsys)
    assert rc == 1 and "regression" in err


@needs_real
def test_real_pairs_calibrated():
    rows = {r.pair: r for r in real_rows(str(REAL))}
    assert len(rows) == len([p for p in REAL_PAIRS if not p.base.startswith("torch_")])
    assert rows["input_bound -> healthy_bf16"].within and rows["input_bound -> healthy_bf16"].fixed == ["input_bound"]
    nocb = rows["healthy_bf16_nocb -> healthy_bf16"]
    assert nocb.fixed == [] and nocb.predicted_ms is None and abs(nocb.realised_ms) < 0.01 * nocb.base_ms
    fp32 = rows["fp32_highest -> healthy_bf16"]
    assert set(fp32.fixed) == {"mixed_precision_off", "tensor_core_unused"} and fp32.within
    d = diff_reports(report(REAL, "healthy_bf16_nocb"), report(REAL, "healthy_bf16"))
    assert d.step.verdict == "unchanged"
    torch = REAL.parent / "real-h100-torch"
    if torch.is_dir():  # the PyTorch pair: the same MLP in fp32 and in bf16 (issue #20's roofline speedups)
        (pair,) = real_rows(str(torch))
        assert set(pair.fixed) == {"mixed_precision_off", "tensor_core_unused"} and pair.within


def test_text_has_every_section(logdir):
    d = diff_reports(report(logdir, "fp32_no_tensor_cores__before"), report(logdir, "fp32_no_tensor_cores__after"))
    text = to_text(d)
    for section in ("PREDICTED VS REALISED", "FINDINGS", "STEP BREAKDOWN", "HEADLINE", "KERNEL TIME BY CLASS",
                    "LARGEST KERNEL CHANGES", "LARGEST OP CHANGES", "GPUS"):
        assert section in text, section


def test_one_finding_in_two_groups_is_no_overlap(logdir):
    """gpu_imbalance claims collective and idle time (two rounded parts): 'If every fix lands' must not call
    that an overlap of savings."""
    from tb_gpu_advisor.report.render import achievable_text

    r = report(logdir, "multi_gpu_gpu0_oversubscribed__before")
    f = next(f for f in r.findings if f.rule == "gpu_imbalance")
    assert {p["group"] for p in f.saving.recovers} == {"collectives", "host"}
    line = achievable_text(r)
    assert line.startswith("If every fix lands") and "overlap" not in line, line


@needs_real
def test_another_frameworks_run_compares_by_rule_and_says_so():
    """The tab offers every run, any framework: a TensorFlow demo run against a real JAX capture still diffs."""
    demo = REPO / "demo_logs"
    d = diff_reports(report(demo, "input_bound"), report(REAL, "healthy_bf16"))
    assert (d.base.framework, d.new.framework) == ("TensorFlow", "JAX")
    assert any("different frameworks (TensorFlow, JAX)" in n for n in d.notes)
    assert ("input_bound", "fixed") in [(f.rule, f.status) for f in d.findings]
    assert d.step.verdict == "faster" and {c.key for c in d.kernel_classes} >= {"matmul/conv"}


def test_the_same_gemms_in_another_dtype_are_the_same_work():
    """torch_fp32 -> torch_healthy_bf16 ran the same [4096,4096]x[4096,4096] GEMMs: the dtype is the fix the diff
    measures, not different work (issue #36 read "NOT COMPARABLE ... no GEMM shape in common"); other shapes are."""
    from types import SimpleNamespace

    from tb_gpu_advisor.model.schema import HostReport, Table
    from tb_gpu_advisor.report.diff import incomparable

    side = SimpleNamespace(hosts=[], headline=[])  # no FLOPs card: the shapes alone decide

    cols = ["op and shapes", "kind", "precision"]

    def host(*rows: tuple[str, str]) -> HostReport:
        return HostReport(host="h", path="p", size_bytes=1,
                          roofline=Table("GEMM shapes", cols, [[f"aten::mm {p} {s}", "matmul", p] for p, s in rows]))

    fp32, bf16 = host(("fp32", "[4096,4096]x[4096,4096]")), host(("bf16", "[4096,4096]x[4096,4096]"))
    assert "no GEMM shape in common" not in incomparable(side, side, fp32, bf16)  # type: ignore[arg-type]
    other = host(("bf16", "[1024,4096]x[4096,4096]"))
    assert "no GEMM shape in common" in incomparable(side, side, fp32, other)  # type: ignore[arg-type]
