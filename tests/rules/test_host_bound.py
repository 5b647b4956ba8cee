"""The host-bound finding by construction (issue #37 survey, miss 1): it fires on its own saving whatever else fired,
and recovers only the host work no other finding claims, so the host's time is counted once.

A hand-built 10 ms step (``tests/support/rules_factory``): the ledger books 6.0 ms of host work and 0.2 ms of idle
nothing explains; another check warns and claims 1.0 ms of the host's time.  What the host-bound finding may still
save is 6.0 + 0.2 - 1.0 = 5.2 ms, never more than the 6.0 ms of host work."""

from __future__ import annotations

import dataclasses

from tb_gpu_advisor.rules import REGISTRY, evaluate
from tb_gpu_advisor.rules.base import Ctx, finding, saving
from tb_gpu_advisor.rules.savings import achievable
from tests.support.rules_factory import STEP_MS, healthy, ledger


def _host_heavy(claim_ms: float):
    m = healthy(breakdown=ledger(host_compute=6.0, other=0.2))
    m.headline.device_step_share = 0.38

    def warns(mm):
        ctx = Ctx(mm)
        return [finding(ctx, "input_bound", "warning", "another check warns",
                        saving=saving(ctx, claim_ms, "by construction", [("host", "host_work", claim_ms)]))]
    return m, warns


def test_host_bound_fires_beside_a_warning_with_the_host_time_no_one_else_claims(monkeypatch):
    m, warns = _host_heavy(1.0)
    monkeypatch.setitem(REGISTRY, "input_bound", dataclasses.replace(REGISTRY["input_bound"], check=warns))
    fs = evaluate(m)
    (hb,) = [f for f in fs if f.rule == "unexplained_idle"]  # main: none, a warning had fired
    assert abs(hb.saving.ms_per_step - 5.2) < 1e-6, hb.saving
    assert [r["pool"] for r in hb.saving.recovers] == ["host_own"]
    assert fs[0] is hb and hb.severity == "warning"  # ranked by saving (52%); graded as the device share (38%: amber)
    ach = achievable(STEP_MS, dataclasses.asdict(m.breakdown), fs)
    assert ach["by_group"]["host"] <= 6.2 + 1e-6 and abs(ach["by_group"]["host"] - 6.2) < 1e-6, ach


def test_host_bound_stays_quiet_when_the_others_claim_the_host_time(monkeypatch):
    m, warns = _host_heavy(5.0)  # 1.2 ms left: under half of the GPU's 6.2 ms idle
    monkeypatch.setitem(REGISTRY, "input_bound", dataclasses.replace(REGISTRY["input_bound"], check=warns))
    assert "unexplained_idle" not in [f.rule for f in evaluate(m)]
