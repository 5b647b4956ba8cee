"""Unit tests of every rule on HostMetrics built directly (tests/support/rules_factory.py).

For each rule: silent just below its warning threshold, fires at it, the
severity boundary, and the saving arithmetic.  Thresholds are read from the
table, so these tests follow a retuned table.
"""

from __future__ import annotations

from tb_gpu_advisor import devices

import dataclasses
import json

import pytest

from tb_gpu_advisor.common.thresholds import THRESHOLDS, override
from tb_gpu_advisor.metrics.types import (
    EagerOps,
    ElementwiseChain,
    Gaps,
    HostOps,
    LossScaling,
    MemcpyStat,
    Memory,
    OpStat,
)
from tb_gpu_advisor.model.schema import Finding, Saving
from tb_gpu_advisor.rules import REGISTRY, T, evaluate, rank
from tb_gpu_advisor.rules.base import Ctx, kernels_per_step
from tests.support.rules_factory import fp32_gemms as _fp32
from tests.support.paths import REPO
from tests.support.rules_factory import STEP_MS, STEPS, healthy, idle_ledger, kernel, ledger, multi

EPS = 1e-6


def run(rule_id: str, m) -> list[Finding]:
    return REGISTRY[rule_id].check(m)


def sev(rule_id: str, m) -> str | None:
    fs = run(rule_id, m)
    assert len(fs) <= 1 or rule_id == "capture_quality"
    return fs[0].severity if fs else None


# --------------------------------------------------------------------------- framework


def test_the_module_list_is_the_one_list_of_rules():
    """Rule ids, guide order, card owners and the corpus's truth ids all come from rules.MODULES and the registry."""
    from synthetic.truth import RULE_IDS as TRUTH_IDS
    from tb_gpu_advisor import frameworks, rules

    assert rules.RULE_IDS == tuple(m.__name__.rsplit(".", 1)[1] for m in rules.MODULES)  # one module per id, in order
    assert set(rules.RULE_IDS) == set(REGISTRY) and TRUTH_IDS is rules.RULE_IDS
    for m in rules.MODULES:  # each module registers the rule it is named after
        rid = m.__name__.rsplit(".", 1)[1]
        assert REGISTRY[rid].check.__module__ == m.__name__, rid
    assert {c: rules.card_rule(c) for c in ("input_wait_share", "launch_wait_share", "sixteen_bit_share", "host_op_share",
                                             "device_step_share")} == {
        "input_wait_share": "input_bound", "launch_wait_share": "launch_bound", "sixteen_bit_share": "mixed_precision_off",
        "host_op_share": "host_op_placement", "device_step_share": None}
    # every fix a framework spells out is for a registered rule (a renamed rule would leave dead fixes behind)
    extra = {"unexplained_idle", "healthy", "no_gpu"}
    for fw in [*frameworks.REGISTRY.values(), frameworks.UNKNOWN]:
        unknown = {k for k in fw.fixes if frameworks.fix_rule(k) not in set(REGISTRY) | extra}
        assert not unknown, (fw.id, unknown)


def test_every_rule_names_known_thresholds_and_a_guide_section():
    for r in REGISTRY.values():
        assert r.section and r.title and r.doc, r.id
        for t in r.thresholds:
            assert t in THRESHOLDS


def _code_reading_thresholds() -> str:
    """The package's source, without the table itself and without the rules' ``thresholds=(...)`` declarations
    (a declared name must also be read where the number is used)."""
    import re

    pkg = REPO / "tb_gpu_advisor"
    text = [re.sub(r"thresholds=\([^)]*\)", "", p.read_text(encoding="utf-8"))
            for p in sorted(pkg.rglob("*.py")) if p.name != "thresholds.py" or p.parent != pkg]
    return "\n".join(text)


def test_every_threshold_has_a_source_and_is_read():
    """The table is the single source it claims to be: every entry is read by code (T, grade, a metric's
    threshold, a card's levels) outside the table -- a declared but unread entry fails here."""
    code = _code_reading_thresholds()
    unread = []
    for name, t in THRESHOLDS.items():
        assert t.source and t.meaning, name
        if f'"{name}"' not in code and f"'{name}'" not in code:
            unread.append(name)
    assert not unread, f"thresholds no code reads: {unread}"
    for r in REGISTRY.values():  # what a rule declares exists in the table
        assert set(r.thresholds) <= set(THRESHOLDS), r.id


def test_healthy_capture_gives_one_ok_finding_with_headline_numbers():
    fs = evaluate(healthy())
    assert [(f.rule, f.severity) for f in fs] == [("healthy", "ok")]
    assert "95.0%" in fs[0].summary and "10.0 ms" in fs[0].summary


def test_a_raising_rule_becomes_an_info_finding(monkeypatch):
    def boom(m):
        raise ZeroDivisionError("kaboom")

    monkeypatch.setitem(REGISTRY, "input_bound", dataclasses.replace(REGISTRY["input_bound"], check=boom))
    fs = evaluate(healthy())
    err = [f for f in fs if f.rule == "input_bound"]
    assert len(err) == 1 and err[0].severity == "info" and "could not run" in err[0].summary
    assert "kaboom" in err[0].summary
    assert any(f.rule == "healthy" for f in fs)


def test_findings_are_json_serializable_and_ids_unique():
    m = healthy()
    m.headline.input_wait_share = 0.5
    m.headline.launch_wait_share = 0.2
    m.eager = EagerOps(count=100, per_step=5, time_ms_per_step=3.0, top=["Mul"], op_share=0.3)
    fs = evaluate(m)
    json.dumps([dataclasses.asdict(f) for f in fs], allow_nan=False)
    assert len(fs) >= 2 and len({f.id for f in fs}) == len(fs)  # several findings, else the checks are vacuous
    assert all(f.id.startswith(f"{f.rule}:host0") for f in fs)


def _f(rule, saving, severity="warning", host="h", gpu=None):
    return Finding(id=f"{rule}:{host}", rule=rule, severity=severity, title=rule, summary="", guide_section="",
                   saving=None if saving is None else Saving(saving, saving * 10, ""), host=host, gpu=gpu)


def test_rank_by_saving_then_guide_order_then_severity():
    fs = [_f("xla_not_used", 1.0), _f("input_bound", 1.0), _f("launch_skew", 5.0), _f("capture_quality", None),
          _f("launch_bound", 1.0, "critical"), _f("eager_execution", 1.0, "warning")]
    assert [f.rule for f in rank(fs)] == ["launch_skew", "input_bound", "launch_bound", "eager_execution",
                                         "xla_not_used", "capture_quality"]


def test_rank_by_saving_whatever_the_severity_after_what_the_capture_is():
    """Issue #36: "ranked by estimated saving" put a warning saving 1.4% above info findings saving 9.7% (severity
    tiers first).  The list is now in the order its heading names; a warm-up capture and a critical problem that
    saves no step time still lead."""
    fs = [_f("healthy", None, "ok"), _f("xla_not_used", 9.0, "info"), _f("step_gaps", 0.5, "warning"),
          _f("cold_start", None, "warning"), _f("oom_snapshot", None, "critical"),
          _f("batch_size_headroom", None, "info"), _f("capture_quality", None, "warning")]
    assert [f.rule for f in rank(fs)] == ["cold_start", "oom_snapshot", "xla_not_used", "step_gaps", "capture_quality",
                                         "batch_size_headroom", "healthy"]


def test_rank_is_deterministic_across_hosts():
    fs = [_f("input_bound", 2.0, host="b"), _f("input_bound", 2.0, host="a")]
    assert [f.host for f in rank(fs)] == ["a", "b"]


def test_override_changes_and_restores_a_threshold():
    m = healthy()
    m.headline.input_wait_share = 0.03
    assert sev("input_bound", m) is None
    with override(**{"input_bound.warning": 0.02}):
        assert sev("input_bound", m) == "warning"
    assert sev("input_bound", m) is None


# --------------------------------------------------------------------------- share-of-step rules


def _input(v):
    m = healthy(breakdown=ledger(input_wait=v * STEP_MS))
    m.headline.input_wait_share = v
    return m


def _launch(v, small_share=0.9):
    m = healthy(breakdown=ledger(launch_wait=v * STEP_MS))
    m.headline.launch_wait_share = v
    m.small_kernels.share_of_kernel_time = small_share  # the guide's shape: small kernels do most of the GPU's work
    m.small_kernels.share_of_kernels = 0.9  # ... and are most of the kernels
    return m


def _eager(v):
    return healthy(eager=EagerOps(count=1000, per_step=50, time_ms_per_step=v * STEP_MS, top=["Mul", "AddV2"],
                                   op_share=v))


def _host_ops(v):
    return healthy(host_ops=HostOps(count_per_step=3, time_ms_per_step=v * STEP_MS, share_by_count=0.1,
                                    share_by_time=0.5,
                                    top=[OpStat("model/unique/Unique", "Unique", False, STEPS, v * STEP_MS * STEPS, 0,
                                                0.0, False, None, "")]))


def _memcpy(v):
    return healthy(memcpy=[MemcpyStat("d2h", 4.0, 4 << 20, v * STEP_MS, 0.0, 0.0, True, v * STEP_MS)],
                   breakdown=ledger(memcpy_d2h=v * STEP_MS))


def _loss(v):
    return healthy(loss_scaling=LossScaling(present=True, dynamic=True, op_count_per_step=4, host_ms_per_step=2.0,
                                            gap_ms_per_step=v * STEP_MS, names=["LossScaleOptimizer/cond"]),
                   breakdown=ledger(host_compute=v * STEP_MS))


def _gaps(v, input_ms: float = 0.0):
    """Gaps of ``v`` of the step after every step, ``input_ms`` of each input wait and the rest host work, each inside
    a step's window: the step ledger holds one a step."""
    ms = v * STEP_MS
    per_step = {"input_wait": input_ms, "other": ms - input_ms}
    return healthy(gaps=Gaps(count=STEPS - 1, avg_gap_ms=ms, max_gap_ms=ms * 1.1, share_of_step=v,
                             avg_input_wait_ms=input_ms, avg_launch_ms=0.0, avg_host_other_ms=ms - input_ms,
                             ledger_ms_per_step={c: x for c, x in per_step.items() if x > 0}),
                   breakdown=idle_ledger(per_step))


def _xla(v):
    """Chains of 4 equal element-wise kernels whose fusion saves ``v`` of the step: 3 of the 4 kernels' time."""
    m = healthy()
    total = v * STEP_MS * 4 / 3
    m.fusion.chains = [ElementwiseChain(names=["add", "mul", "tanh", "mul"], length=4, occurrences=10 * STEPS,
                                        total_ms=total * STEPS, gap_ms=0.0, longest_ms=total / 4 * STEPS)]
    return m


def _skew(v):
    """The last of 4 GPUs starts ``v`` of the step late; the others idle meanwhile (their ledgers' "other")."""
    busy = STEP_MS - v * STEP_MS - 0.5
    return multi(busy=(busy,) * 4, skew=v * STEP_MS)


SHARE_RULES = [
    ("input_bound", _input, "input_bound.warning", "input_bound.critical"),
    ("launch_bound", _launch, "launch_bound.warning", "launch_bound.critical"),
    ("eager_execution", _eager, "eager_execution.warning", "eager_execution.critical"),
    ("host_op_placement", _host_ops, "host_op_placement.warning", "host_op_placement.critical"),
    ("excessive_memcpy", _memcpy, "excessive_memcpy.warning", "excessive_memcpy.critical"),
    ("loss_scaling_gaps", _loss, "loss_scaling_gaps.warning", "loss_scaling_gaps.critical"),
    ("step_gaps", _gaps, "step_gaps.warning", "step_gaps.critical"),
    ("xla_not_used", _xla, "xla_not_used.warning", None),
    ("launch_skew", _skew, "launch_skew.warning", "launch_skew.critical"),
]


@pytest.mark.parametrize("rule_id,make,warn,crit", SHARE_RULES, ids=[r[0] for r in SHARE_RULES])
def test_share_rule_boundaries(rule_id, make, warn, crit):
    w = T(warn)
    assert sev(rule_id, make(w * 0.9)) in (None, "info")
    assert sev(rule_id, make(w + EPS)) == "warning"
    if crit:
        c = T(crit)
        assert sev(rule_id, make(c - 1e-4)) == "warning"
        assert sev(rule_id, make(c + EPS)) == "critical"
    else:
        assert sev(rule_id, make(0.99)) == "warning"  # capped: never critical


@pytest.mark.parametrize("rule_id,make,warn,crit", SHARE_RULES, ids=[r[0] for r in SHARE_RULES])
def test_share_rule_finding_is_complete(rule_id, make, warn, crit):
    from tests.support.properties import _recovers_within_ledger

    m = make(0.4)
    assert sum(m.breakdown.as_dict().values()) == pytest.approx(STEP_MS)  # a ledger: it adds up to the step
    (f,) = run(rule_id, m)
    assert not _recovers_within_ledger(f, m.breakdown.as_dict())  # and the saving recovers only what it holds
    assert f.rule == rule_id and f.guide_section and f.title
    assert f.metric is not None and f.metric.threshold == T(warn)
    assert f.metric.detail["threshold_source"] == THRESHOLDS[warn].source
    assert any(ch.isdigit() for ch in f.summary) and f.summary.endswith(".")
    assert f.saving is not None and f.saving.assumption
    assert 0 < f.saving.ms_per_step <= STEP_MS
    assert f.saving.percent_of_step == pytest.approx(100 * f.saving.ms_per_step / STEP_MS, abs=0.01)
    assert f.actions and any(a.snippet for a in f.actions)


def test_input_bound_saving_is_the_whole_wait_and_cites_steps():
    (f,) = run("input_bound", _input(0.3))
    assert f.saving.ms_per_step == pytest.approx(3.0)
    assert f.saving.percent_of_step == pytest.approx(30.0)
    assert "3.00 ms" in f.summary and "30.0%" in f.summary
    assert f.windows and f.windows[0].step is not None and f.windows[0].host == "host0"
    assert "prefetch(tf.data.AUTOTUNE)" in f.actions[0].snippet


def test_launch_bound_saving_keeps_1us_per_small_kernel_and_shows_the_mul_example():
    m = _launch(0.2)  # 2 ms wait; 10 small kernels per step -> 10 us residual
    (f,) = run("launch_bound", m)
    kps = kernels_per_step(m, Ctx(m))
    # the graph itself is one launch a step: the mean wait of one launch stays, with ~1 us per small kernel
    assert f.saving.ms_per_step == pytest.approx(2.0 - 2.0 / kps - 10 * T("launch.fused_us_per_kernel") / 1000,
                                                 abs=1e-3)
    # per step, as the rest of the finding (was: "126,224 × Mul taking 2.77 s in total", the whole capture's count)
    assert "Mul, 6,311.2 calls per step on average taking 138.5 ms" in f.summary and "21.9 us" in f.summary
    ev = f.evidence[0]
    assert ev.columns == ["kernel", "op type", "calls/step", "ms/step", "avg us"] and ev.rows[0][2:4] == [6311.2, 138.5]
    assert any("jit_compile=True" in (a.snippet or "") for a in f.actions)


def test_launch_wait_with_few_small_kernels_is_info_only():
    """A moderate wait on the host with long kernels (a real healthy PyTorch capture: 3.5%, cuLaunchKernelEx at 35 us
    under the profiler) is not the guide's launch-bound: info, saying why; the same wait with small kernels warns."""
    cut = T("launch_bound.min_small_kernel_time_share")
    (f,) = run("launch_bound", _launch(0.05, small_share=cut * 0.9))
    assert f.severity == "info" and "so this wait is the host's cost per op" in f.summary
    (f,) = run("launch_bound", _launch(0.05, small_share=cut))
    assert f.severity == "warning" and "cost per op" not in f.summary
    (f,) = run("launch_bound", _launch(T("launch_bound.critical"), small_share=0.0))  # a high wait is a problem anyway
    assert f.severity == "critical"


def test_host_sync_grades_the_gpu_idle_after_syncs_and_names_the_callers():

    w = T("host_sync.warning")
    assert run("host_sync", _synced({"launch_wait": w * STEP_MS * 0.9})) == []
    m = _synced({"launch_wait": w * STEP_MS * 1.1})
    (f,) = run("host_sync", m)
    assert f.severity == "warning" and "2 times per step" in f.summary and "aten::_local_scalar_dense" in f.summary
    assert f.saving.ms_per_step == pytest.approx(w * STEP_MS * 1.1, abs=1e-3)
    # in the launch group, in a pool of its own: launch_bound leaves the wait after syncs out of its claim
    # (``after_waits_ms``), so the two claims are two times and add up (h37-probe42s; main booked it in ``launch``)
    assert (f.saving.recovers[0]["group"], f.saving.recovers[0]["pool"]) == ("launch", "sync_idle")
    assert run("host_sync", _synced({"launch_wait": T("host_sync.critical") * STEP_MS}))[0].severity == "critical"
    assert run("host_sync", healthy()) == []  # no sync calls: nothing to say


def _synced(idle: dict[str, float]):
    """Two syncs per step whose GPU idle the step's ledger books as ``idle`` (category -> ms per step)."""
    from tb_gpu_advisor.metrics.types import HostSyncs

    return healthy(syncs=HostSyncs(calls_per_step=2.0, gpu_idle_ms_per_step=sum(idle.values()), gpu_idle_ledger_ms=idle,
                                   callers=[("aten::_local_scalar_dense", 2.0)]), breakdown=idle_ledger(idle))


def test_host_sync_recovers_the_idle_where_the_ledger_books_it():
    """Issue #36: cold_a100_alexnet's syncs idled the GPU 877 ms while the host ran start-up and its own work, all
    claimed as launch wait (the step holds 1.9 ms of it).  Each part is claimed in its own group, within the ledger."""
    from tests.support.properties import _recovers_within_ledger

    m = _synced({"launch_wait": 0.2, "host_compute": 1.0, "startup": 3.0})
    (f,) = run("host_sync", m)
    got = {(r["group"], r["pool"]): r["ms"] for r in f.saving.recovers}
    assert got == {("launch", "sync_idle"): 0.2, ("host", "sync_idle"): 1.0, ("startup", "sync_idle"): 3.0}
    assert not _recovers_within_ledger(f, m.breakdown.as_dict())


def test_host_sync_leaves_copies_waits_to_the_copies_and_names_unrecorded_host_time():
    """Issue #37 item 3: only the program's syncs are graded; GPU idle while the host ran nothing recorded is a note
    (no saving, nothing to size) that says how to record it, whatever its size."""
    from tb_gpu_advisor.metrics.types import HostSyncs

    w = T("host_sync.warning")
    m = healthy(syncs=HostSyncs(calls_per_step=1.0, gpu_idle_ms_per_step=0.01, copy_calls_per_step=2.0,
                                copy_idle_ms_per_step=0.5 * STEP_MS, unrecorded_ms_per_step=0.4 * STEP_MS,
                                callers=[("aten::_local_scalar_dense", 1.0)], copy_callers=[("aten::copy_", 2.0)]))
    (f,) = run("host_sync", m)
    assert f.id.endswith("#unrecorded_host_share") and f.severity == "info" and f.saving is None
    assert "did not record" in f.summary and f.metric.value == pytest.approx(0.4)
    m.syncs.unrecorded_ms_per_step = w * STEP_MS * 0.9
    assert run("host_sync", m) == []


def test_a_saving_under_a_few_per_cent_is_a_note_for_every_rule():
    """Issue #37 item 4: one rule over savings -- under ``severity.warning_min_saving`` of the step a finding of any
    check is info, under ``severity.critical_min_saving`` at most a warning; without a saving it keeps its grade."""
    from tb_gpu_advisor.rules import follow_savings

    def f(rule: str, sev: str, pct: float | None) -> Finding:
        sav = None if pct is None else Saving(ms_per_step=pct * STEP_MS / 100, percent_of_step=pct, assumption="")
        return Finding(id=rule, rule=rule, severity=sev, title="", summary="", guide_section="", saving=sav)

    lo, hi = 100 * T("severity.warning_min_saving"), 100 * T("severity.critical_min_saving")
    fs = [f("mixed_precision_off", "warning", lo * 0.9), f("launch_bound", "critical", lo * 0.9),
          f("input_bound", "critical", (lo + hi) / 2), f("host_sync", "critical", hi), f("capture_quality", "warning", None)]
    follow_savings(fs)
    assert [x.severity for x in fs] == ["info", "info", "warning", "critical", "warning"]


def test_step_gaps_subtracts_input_and_loss_scaling_and_names_callbacks():
    m = _gaps(0.3, input_ms=1.0)
    (f,) = run("step_gaps", m)
    assert f.saving.ms_per_step == pytest.approx(2.0)  # the 2 ms of host work per gap the ledger holds
    assert [r["group"] for r in f.saving.recovers] == ["host"]
    assert "steps_per_execution" in f.actions[0].snippet
    assert any(a.snippet == "export TF_GPU_THREAD_MODE=gpu_private" for a in f.actions)


def test_step_gaps_does_not_suggest_gpu_private_when_already_used():
    m = _gaps(0.3)
    m.capture.gpu_thread_mode_private = True
    (f,) = run("step_gaps", m)
    assert not any("TF_GPU_THREAD_MODE=gpu_private" in (a.snippet or "") for a in f.actions)


def test_step_gaps_only_input_wait_is_left_to_input_bound():
    assert run("step_gaps", _gaps(0.3, input_ms=3.0)) == []


def test_step_gaps_recovers_only_the_gaps_inside_the_steps():
    """Issue #36: nsys_a100_saxpy_mpi claimed 181 ms of host work per step between steps whose ledger holds 144 ms:
    a gap outside every step's window is in no step.  The saving is the ledger's booking of the gaps."""
    m = _gaps(0.3)
    m.gaps.ledger_ms_per_step = {"other": 1.0, "launch_wait": 0.5}  # the rest of each gap lies between the windows
    m.breakdown = idle_ledger(m.gaps.ledger_ms_per_step)
    (f,) = run("step_gaps", m)
    assert f.saving.ms_per_step == pytest.approx(1.5)
    assert {(r["group"], r["ms"]) for r in f.saving.recovers} == {("host", 1.0), ("launch", 0.5)}


def test_excessive_memcpy_sync_copies_warn_below_the_share():
    m = healthy(memcpy=[MemcpyStat("d2h", 2.0, 1 << 20, 0.2, 2.0, 1.0, True, 0.2, sync_ms_per_step=0.2)])  # 2%, all sync
    assert sev("excessive_memcpy", m) == "warning"
    (f,) = run("excessive_memcpy", m)
    assert "synchronous" in f.summary and "recur" in f.summary


def test_excessive_memcpy_sync_time_is_the_sync_copies_time_not_a_count_share():
    """Half the copies synchronous, but the small half: 0.2 ms of 10 is under the sync share, so no finding (a count
    share times all the copies' time called 1.2 ms of a 19 MB batch and its 256-byte labels synchronous)."""
    m = healthy(memcpy=[MemcpyStat("h2d", 2.0, 20 << 20, 2.4, 1.0, 0.5, True, 0.4, sync_ms_per_step=0.002)])
    assert run("excessive_memcpy", m) == []


def test_excessive_memcpy_capped_when_host_ops_explain_the_copies():
    m = _memcpy(0.5)
    m.host_ops = _host_ops(0.1).host_ops
    (f,) = run("excessive_memcpy", m)
    assert f.severity == "warning" and "the finding on ops placed on the host" in f.summary


def test_host_op_placement_ignores_loss_scaling_ops():
    m = _host_ops(0.3)
    m.host_ops.top[0].op_name = "LossScaleOptimizer/cond"
    assert run("host_op_placement", m) == []


def test_host_op_placement_saving_includes_copy_round_trips():
    m = _host_ops(0.1)
    m.breakdown.host_compute = 1.0
    m.memcpy = [MemcpyStat("d2h", 1, 1, 0.5, 0, 0, True, 0.5), MemcpyStat("h2d", 2, 1, 0.8, 0, 0, True, 0.8)]
    (f,) = run("host_op_placement", m)
    assert f.saving.ms_per_step == pytest.approx(1.0 + 0.5 + 0.5)
    assert "set_log_device_placement(True)" in f.actions[0].snippet


def test_eager_saving_is_capped_by_gpu_idle_time():
    m = _eager(0.6)
    m.breakdown.launch_wait, m.breakdown.host_compute = 1.0, 0.5
    (f,) = run("eager_execution", m)
    assert f.severity == "critical" and f.saving.ms_per_step == pytest.approx(1.5)
    assert "@tf.function" in f.actions[0].snippet


def test_loss_scaling_suggests_static_scale():
    (f,) = run("loss_scaling_gaps", _loss(0.1))
    assert "dynamic=False" in f.actions[0].snippet and f.saving.ms_per_step == pytest.approx(1.0)
    assert run("loss_scaling_gaps", healthy(loss_scaling=LossScaling(True, False, 4, 2.0, 5.0))) == []


def test_xla_chains_filtered_by_length_and_xla_in_use_and_saving_the_fused_kernel_time():
    m = _xla(0.4)
    m.fusion.chains[0].length = 2
    assert run("xla_not_used", m) == []
    m = _xla(0.4)
    m.fusion.xla_in_use = True
    assert run("xla_not_used", m) == []
    (f,) = run("xla_not_used", _xla(0.4))
    # fused, a chain takes about its longest kernel: 3 of 4 equal kernels' time is saved
    assert f.saving.ms_per_step == pytest.approx(0.4 * STEP_MS)
    m = _xla(0.4)
    m.fusion.chains[0].gap_ms = 1000.0 * STEPS  # launch gaps inside the chain are launch_bound's time, not fusion's
    (g,) = run("xla_not_used", m)
    assert g.saving.ms_per_step == f.saving.ms_per_step
    assert "add → mul → tanh → mul" in f.evidence[0].rows[0][0]
    assert f.evidence[0].rows[0][-1] == pytest.approx(0.4 * STEP_MS * STEPS)
    assert any("--tf_xla_auto_jit=2" in (a.snippet or "") for a in f.actions)
    assert sev("xla_not_used", _xla(T("xla_not_used.info") + EPS)) == "info"
    assert sev("xla_not_used", _xla(T("xla_not_used.warning") + EPS)) == "warning"


def test_xla_chain_time_is_per_gpu():
    m = _xla(0.12)
    m.gpus = multi().gpus  # 4 GPUs: 12% summed -> 3% per GPU
    assert sev("xla_not_used", m) == "info"


# --------------------------------------------------------------------------- precision rules


def test_mixed_precision_off_fires_below_10_percent_16bit_and_is_critical_for_gemm_heavy():
    assert sev("mixed_precision_off", _fp32(0.8)) == "critical"
    assert sev("mixed_precision_off", _fp32(0.3)) == "warning"
    m = _fp32(0.8)
    m.headline.sixteen_bit_time_share = T("mixed_precision_off.warning") + EPS
    assert sev("mixed_precision_off", m) is None
    (f,) = run("mixed_precision_off", _fp32(0.8))
    assert "set_global_policy('mixed_float16')" in f.actions[0].snippet
    # 160 ms GEMM + 40 ms other over 20 steps -> 8 ms x (1-1/sp) + 2 ms x (1-1/1.25), sp the GPU's own ratio of
    # dense peaks (fp16 Tensor Cores over fp32 CUDA cores: the GEMMs keep their share of the peak; issue #20)
    g = m.gpus[0]
    sp = devices.peak_flops(g.name, (7, 0), devices.P_FP16).value / devices.peak_flops(g.name, (7, 0), devices.P_FP32).value
    spm = T("mixed_precision.memory_bound_speedup")
    assert 7.5 < sp < 8.5  # V100: 125 / 15.7 TFLOP/s
    assert f.saving.ms_per_step == pytest.approx(8 * (1 - 1 / sp) + 2 * (1 - 1 / spm), abs=1e-3)
    assert "dense" in f.saving.assumption


def test_precision_rules_skip_gpus_without_tensor_cores():
    m = _fp32(0.8, cc="6.1")
    assert run("mixed_precision_off", m) == [] and run("tensor_core_unused", m) == []


def test_mixed_precision_off_silent_without_matmul_work():
    assert run("mixed_precision_off", _fp32(0.05)) == []


def test_tensor_core_unused_fp32_and_fp16_fallback():
    f32 = run("tensor_core_unused", _fp32(0.8))
    assert f32 and f32[0].severity == "critical" and "32-bit" in f32[0].summary
    m = healthy()
    m.kernels = [kernel("turing_fp16_sgemm_fallback", "MatMul", 100.0, 200, False, True, "fp16"),
                 kernel("ampere_fp16_s16816gemm", "MatMul", 100.0, 200, True, True, "fp16")]
    (f,) = run("tensor_core_unused", m)
    assert f.severity == "critical" and "multiples of 8" in f.summary
    (g,) = run("misaligned_dims", m)
    assert g.metric.value == pytest.approx(0.5) and g.severity == "critical"
    assert "((units + 7) // 8) * 8" in g.actions[0].snippet


def test_misaligned_dims_silent_when_16bit_gemms_use_tensor_cores():
    assert run("misaligned_dims", healthy()) == [] and run("tensor_core_unused", healthy()) == []


# --------------------------------------------------------------------------- several GPUs


def test_single_gpu_captures_skip_multi_gpu_rules():
    m = healthy()
    for r in ("allreduce_extra", "allreduce_slow", "gpu_imbalance", "launch_skew", "sequential_gpus"):
        assert run(r, m) == []


def test_allreduce_extra():
    assert run("allreduce_extra", multi(calls=1.0)) == []
    (f,) = run("allreduce_extra", multi(calls=6.0, ar_ms=0.6))
    assert f.severity == "warning" and "6 AllReduce calls per step" in f.summary
    assert f.saving.ms_per_step == pytest.approx(0.5)
    assert "num_packs=1" in f.actions[0].snippet
    (f,) = run("allreduce_extra", multi(calls=6.0, ar_ms=3.0))
    assert f.severity == "critical"


def test_allreduce_slow_with_and_without_params():
    (f,) = run("allreduce_slow", multi(ar_ms=1.0))  # 10% of step, no parameter count
    assert f.severity == "info" and f.saving is None and "--params" in f.actions[0].snippet
    # without a parameter count nothing says it is slow: info however large (the time the step pays for
    # communication is comm_exposed's, over the job's ranks)
    assert sev("allreduce_slow", multi(ar_ms=5.0)) == "info"
    m = multi(ar_ms=2.0)
    m.multi_gpu.params = 25_000_000  # 100 MB at 300 GB/s = 0.333 ms expected; 2.0 ms measured = 6x
    m.multi_gpu.bandwidth_bytes_per_s = 300e9
    (f,) = run("allreduce_slow", m)
    assert f.severity == "critical" and f.metric.value == pytest.approx(6.0, rel=1e-3)
    assert f.saving.ms_per_step == pytest.approx(2.0 - 1 / 3, abs=1e-3)
    m.multi_gpu.params = 200_000_000  # expected 2.67 ms > measured
    assert run("allreduce_slow", m) == []


def test_gpu_imbalance_names_the_heavy_gpu_and_saves_down_to_the_mean():
    assert run("gpu_imbalance", multi()) == []
    m = multi(busy=(9.0, 5.0, 5.0, 5.0))
    (f,) = run("gpu_imbalance", m)
    assert f.severity == "critical" and f.gpu == 0 and "GPU0" in f.title
    assert f.saving.ms_per_step == pytest.approx(9.0 - 6.0)
    m = multi(busy=(5.0 / (1 - T("gpu_imbalance.warning")) + 0.01, 5.0, 5.0, 5.0))
    assert sev("gpu_imbalance", m) == "warning"


def test_gpu_imbalance_compares_compute_not_busy_time():
    """The straggler computes most; the others are as busy, spinning in AllReduce while they wait for it."""
    m = multi()
    for g, comp in zip(m.gpus, (9.0, 5.0, 5.0, 5.0)):
        g.breakdown = dataclasses.replace(g.breakdown, device_compute=comp, collectives=9.0 - comp)
    m.multi_gpu.compute_imbalance, m.multi_gpu.heaviest_compute_gpu = (9.0 - 5.0) / 9.0, 0
    # the host's ledger is its GPUs' mean: 6 ms of compute, 3 ms of collectives (the saving is at most that wait)
    m.breakdown = dataclasses.replace(m.breakdown, device_compute=6.0, collectives=3.0)
    assert m.multi_gpu.busy_imbalance == 0.0  # busy time: all equal
    (f,) = run("gpu_imbalance", m)
    assert f.gpu == 0 and f.saving.ms_per_step == pytest.approx(9.0 - 6.0)


def test_launch_skew_knob_depends_on_gpu_private_threads():
    (f,) = run("launch_skew", multi(skew=1.0))
    assert f.actions[0].snippet == "export TF_GPU_THREAD_MODE=gpu_private" and f.gpu == 3
    m = multi(skew=1.0)
    m.capture.gpu_thread_mode_private = True
    (f,) = run("launch_skew", m)
    assert "TF_GPU_THREAD_COUNT" in f.actions[0].snippet
    assert run("launch_skew", multi(skew=T("launch_skew.min_ms") * 0.5)) == []


def test_sequential_gpus_and_launch_skew_defers_to_it():
    assert run("sequential_gpus", multi()) == []
    # 4 GPUs busy 2 ms each in turn: each waits 6 ms of its 10 ms step for the other three (its ledger's host time)
    m = multi(busy=(2.0, 2.0, 2.0, 2.0), concurrency=0.1, skew=5.0, peer_wait={"other": 6.0})
    (f,) = run("sequential_gpus", m)
    assert f.severity == "critical" and f.metric.value == pytest.approx(0.1)
    assert f.saving.ms_per_step == pytest.approx(6.0 * 0.9)
    assert [(r["group"], r["pool"]) for r in f.saving.recovers] == [("host", "sequential")]
    assert run("launch_skew", m) == []
    assert sev("sequential_gpus", multi(busy=(2.0, 2.0, 2.0, 2.0), concurrency=0.4)) == "warning"


def test_sequential_gpus_whose_steps_lie_apart_save_no_step_time():
    """Issue #36, the real V100 BERT: GPU:6 runs its 20.6 ms step 650 ms after GPU:4's, so neither waits inside its
    own step; the turn-taking costs wall time outside every step.  It was claimed as 14.9 ms of host time in a step
    whose ledger holds 2.3 ms: now no step saving, said in words, and still critical (it leads, saving nothing)."""
    m = multi(n=2, busy=(8.0, 8.0), concurrency=0.0)
    m.multi_gpu.step_span_ms = 650.0
    (f,) = run("sequential_gpus", m)
    assert f.severity == "critical" and f.saving is None
    assert "span 650.0 ms" in f.summary and "wall time" in f.summary
    assert rank([f, *run("input_bound", _input(0.2))])[0] is f


def test_sequential_gpus_respects_the_overlap_busy_times_force():
    m = multi(n=2, busy=(9.0, 9.0), concurrency=0.0)  # 18 ms busy in a 10 ms step: >= 8 ms overlap
    assert run("sequential_gpus", m) == []
    m = multi(n=2, busy=(4.0, 4.0), concurrency=0.0)
    assert sev("sequential_gpus", m) == "critical"


def test_batch_size_headroom_only_with_memory_data():
    assert run("batch_size_headroom", healthy()) == []
    m = healthy(memory=Memory(available=True, peak_bytes=8 << 30, capacity_bytes=40 << 30))
    (f,) = run("batch_size_headroom", m)
    assert f.severity == "info" and "20.0%" in f.summary
    m.memory.peak_bytes = 30 << 30
    assert run("batch_size_headroom", m) == []


# --------------------------------------------------------------------------- capture quality


def test_capture_quality():
    assert run("capture_quality", healthy()) == []
    m = healthy()
    m.steps.count, m.steps.found = 2, 2
    (f,) = run("capture_quality", m)
    assert f.severity == "warning" and "Only 2" in f.summary and "profile_batch" in f.actions[0].snippet
    m = healthy()
    m.capture.length_ms = 120_000
    m.capture.step_time_cv = 0.9
    fs = run("capture_quality", m)
    assert [x.severity for x in fs] == ["info", "info"] and len({x.id for x in fs}) == 2
    m = healthy()
    m.steps.source, m.steps.count, m.steps.note = "whole_capture", 1, "no step markers"
    (f,) = run("capture_quality", m)  # GPU work and no step found: one pass of the program, said once
    assert "one pass" in f.title and "no step marker" in f.summary


def test_rules_read_only_typed_signals():
    """Rules read HostMetrics through its typed signal groups: every ``m.<group>.<field>`` a rule module (or the
    helpers it shares) reads is a declared field, so a renamed metric fails here, not as a silently quiet rule."""
    import ast
    import dataclasses
    import typing
    from pathlib import Path

    from tb_gpu_advisor.metrics import types as mt

    hints = typing.get_type_hints(mt.HostMetrics)
    bad, seen = [], 0
    for path in sorted(Path(mt.__file__).parents[1].joinpath("rules").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "m"):
                continue
            seen += 1
            if node.attr not in hints and not hasattr(mt.HostMetrics, node.attr):
                bad.append(f"{path.name}: m.{node.attr}")
    # one level down: m.<group>.<field> for dataclass groups
    for path in sorted(Path(mt.__file__).parents[1].joinpath("rules").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
                    and isinstance(node.value.value, ast.Name) and node.value.value.id == "m"):
                group = hints.get(node.value.attr)
                if dataclasses.is_dataclass(group):
                    fields = set(typing.get_type_hints(group)) | set(dir(group))
                    if node.attr not in fields:
                        bad.append(f"{path.name}: m.{node.value.attr}.{node.attr}")
    assert seen > 50 and not bad, bad


@pytest.mark.parametrize("framework", ["pytorch", "jax", "tensorflow"])
def test_mixed_precision_advice_fits_the_gpu(framework):
    """No bf16 advice for a GPU without bf16 Tensor Cores (issue #18 class 8): a V100 (sm70) gets float16 with loss
    scaling, an H100 (sm90) bfloat16; every framework, both precision rules."""
    from tb_gpu_advisor import rules

    for cc, want, never in (("7.0", "float16", "bfloat16"), ("9.0", "bfloat16", "GradScaler")):
        m = _fp32(0.8, cc=cc)
        m.capture.framework = framework
        for rid in ("mixed_precision_off", "tensor_core_unused"):
            (f,) = [f for f in rules.evaluate(m) if f.rule == rid]
            text = " ".join(f"{a.text} {a.snippet or ''}" for a in f.actions) + " " + f.summary
            if framework == "tensorflow":  # Keras's mixed_float16 policy is float16 with loss scaling on every GPU
                assert "mixed_float16" in text, (cc, rid)
                continue
            assert want in text and never not in text.replace("none for bfloat16", ""), (framework, cc, rid, text)


def test_launch_bound_title_and_wording_follow_its_numbers():
    """Issue #18 class 6 / #21 item 4: 'many small kernels' only when most kernels are small; otherwise the GPU waits
    for the host to dispatch ops of ordinary size.  A 1.2 us kernel is far shorter than the 20-40 us launch latency,
    not 'about' it."""
    from dataclasses import replace

    m = _launch(0.4)
    m.small_kernels.share_of_kernels = 0.9
    (f,) = run("launch_bound", m)
    assert f.title.startswith("Launch-bound: many small kernels")
    m.small_kernels.share_of_kernels = 0.0  # "0 of 41 kernels run shorter than 40 us"
    (f,) = run("launch_bound", m)
    assert f.title == "Launch-bound: the GPU waits for the host to dispatch each op"
    m.small_kernels.top = [replace(m.small_kernels.top[0], avg_us=1.2)]
    (f,) = run("launch_bound", m)
    assert "17x shorter than the 20-40 us a launch takes" in f.summary and "about the 20" not in f.summary


def test_launch_bound_of_a_few_kernels_says_few():
    """(h37-auditleft31) "many small kernels" claims a count: a step of at most ``launch_bound.step_calls`` kernels
    (the count the step-level diagnosis calls a few) waits for the host before each launch, and says so; one more
    kernel a step keeps "many small kernels" (wild/jax_mi300x's 1.6 kernels a step, lazy_first_launch_t4's 3 and
    waits/event_sync_a100's 4 were told "many" on main)."""
    m = _launch(0.4)
    few = T("launch_bound.step_calls")
    m.small_kernels.kernels_per_step = few
    (f,) = run("launch_bound", m)
    assert f.title == "Launch-bound: the GPU waits for the host before each of its few kernels", f.title  # main: many
    m.small_kernels.kernels_per_step = few + 1
    (f,) = run("launch_bound", m)
    assert f.title.startswith("Launch-bound: many small kernels")


def test_a_fix_whose_object_the_trace_lacks_is_not_given():
    """The fused optimizer is a launch-bound fix only for a loop that runs an optimizer step: a forward-and-backward
    benchmark (a real torch.compile trace with no ``Optimizer.step``) was told to fuse an optimizer it does not have.
    The need is read from the trace's host names (``metrics.capture.unmet_fixes``)."""
    from tb_gpu_advisor.frameworks import pytorch

    m = _launch(0.4)
    m.capture.framework = "pytorch"
    (f,) = run("launch_bound", m)
    assert pytorch.FUSED_OPTIMIZER.text in [a.text for a in f.actions]
    m.unmet_fixes = [pytorch.FUSED_OPTIMIZER.text]
    (f,) = run("launch_bound", m)
    assert pytorch.FUSED_OPTIMIZER.text not in [a.text for a in f.actions] and f.actions


def test_unmet_fixes_follow_the_trace_s_optimizer_steps(tmp_path):
    """On generated PyTorch traces: a training loop with ``Optimizer.step#SGD.step`` meets the fused optimizer's need,
    a loop of tanh kernels with no optimizer does not."""
    from synthetic import torchtrace as tt
    from tb_gpu_advisor.formats.kineto.adapter import read_trace
    from tb_gpu_advisor.frameworks import pytorch
    from tb_gpu_advisor.runtime.pipeline import host_metrics

    out = {}
    for name in ("healthy_bf16", "tiny_ops"):
        (path,) = tt.write_run(str(tmp_path), name, steps=6)
        out[name] = host_metrics(read_trace(path)).unmet_fixes
    assert out == {"healthy_bf16": [], "tiny_ops": [pytorch.FUSED_OPTIMIZER.text]}


def test_launch_bound_words_kernels_that_last_no_time_without_dividing_by_zero():
    """robustness.py section 9 (the hostile ``zero_durations`` file through the plugin) logged "rule launch_bound
    failed: float division by zero": kernels of 0 us have no ratio to the launch latency."""
    from tb_gpu_advisor.rules.launch_bound import _against_latency

    assert _against_latency(0.0).startswith(", far shorter than the")
    assert "x shorter" in _against_latency(1.0)


def test_one_kernel_a_step_has_no_launches_to_batch():
    """A graph is one launch too: a step of one kernel, however long its launch wait, saves nothing by batching
    launches, so launch_bound stays quiet and the card says why (wild/compiled_a100_triton: one 2 us Triton kernel)."""
    from tb_gpu_advisor.rules import quiet_reason

    m = _launch(0.2)
    many = kernels_per_step(m, Ctx(m))
    assert many > 1 and run("launch_bound", m)
    m.headline.kernel_count = STEPS  # one launch a step
    m.small_kernels.kernels_per_step = 1.0  # as the metrics count it, per step and rank (metrics.context.per_step)
    assert kernels_per_step(m, Ctx(m)) == pytest.approx(1.0)
    assert run("launch_bound", m) == []
    assert "one kernel a step" in quiet_reason("launch_bound", m)


def test_launch_skew_saves_at_most_the_waits_the_ledger_holds():
    """h37-left52: launch_skew saved its whole skew (2.99 ms on one reading of nsys/fsdp_mfu_before) where the step's
    ledger held 0.94 ms of collective and idle time, the only time the GPUs' wait for each other sits in.  Here a
    3 ms skew over a step holding 0.3 ms of collectives and 0.64 ms idle: fails on main (3.0 ms saved)."""
    from tests.support.properties import _recovers_within_ledger

    m = multi(skew=3.0, breakdown=ledger(collectives=0.3, other=0.64))
    (f,) = run("launch_skew", m)
    assert f.saving.ms_per_step == pytest.approx(0.94)
    assert not _recovers_within_ledger(f, m.breakdown.as_dict())


def test_launch_skew_within_the_waits_keeps_its_skew():
    """Control: a 1 ms skew over a step idling 1 ms (the factory's ledger): the saving is the skew."""
    (f,) = run("launch_skew", multi(skew=1.0))
    assert f.saving.ms_per_step == pytest.approx(1.0)
