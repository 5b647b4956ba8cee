"""Kept reports read as their user reads them (issue #37, h37-review11): sentences that contradicted their own
numbers, their run or another surface of the same report, each now a property of ``tests/support/properties.py``
walked over every report by ``tests/report/test_properties.py`` (each failed on main 416afe05):

* ``card-quiet`` -- a headline card said why its check "did not fire" ("... and the rest is below this check's
  level") beside that check's own note: the JAX block_until_ready runs (h200_waits), cloverleaf_a100_cuda,
  resnet50_num_workers_0/4, the nsys FSDP pair.
* ``ruled-out`` -- the graph-replay note says "another graph cannot cut it", yet JAX (and TensorFlow) fell back to the
  check's general fixes: "jit the whole step as one function ... un-jitted jnp calls each dispatch their own kernel"
  to a step that is one jitted program replayed from XLA's command buffers.
* ``one-name`` -- jax_mi355x's memory table says "279 GiB (allocator limit)", its headroom finding "of its 279 GiB"
  and "before the GPU is 90% full": XLA's limit is 97.0% of the GPU's 288 GiB, and a limit from 97% on was named the
  GPU's own.
* ``words`` (sizes) -- "1001 MiB is held across steps" beside "11.1 GiB" (snapshot_windows_gpt): three significant
  digits, as every other size.
* ``fix-twice``, ``premise``, ``version-said`` -- PyTorch 1.8-1.10 (resnet50_num_workers_0/4): the launch-bound
  saving assumed "one launch a step (a graph's)" beside fixes that held no graph (TorchScript, a bigger batch), the
  batch size was told twice under one finding, and the legacy fix said "this trace was written by PyTorch 1.8-1.10"
  whatever version the job line read.
* ``waits-at`` -- demo multi_gpu_gpu0_oversubscribed read "every replica waits for it at the AllReduce (the others
  spend 149 us per step in collectives, GPU0 150 us)": its other GPUs wait 3.45 ms a step outside the collectives.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from tb_gpu_advisor.common.fmt import gb
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.model.schema import Finding, Report
from tests.support.kineto_report import job_doc, report
from tests.support.paths import DEMO_LOGS, FIXTURES, SHARED_PROFILES
from tests.support.properties import (card_quiet_problems, fix_twice_problems, limit_name_problems,
                                      premise_fix_problems, report_violations, ruled_out_fix_problems,
                                      version_said_problems, waits_at_problems, words_problems)
from tests.support.run_report import run_report
from tests.support.report_store import session_report


def _only(r: Report, rule: str) -> Finding:
    (f,) = [f for h in r.hosts for f in h.findings if f.rule == rule]
    return f


def _card(r: Report, card: str):
    (h,) = r.hosts
    return next(c for c in h.headline if c.id == card)


_SESSIONS: dict[str, list[Report]] = {}


def _wild_torch_all(run: str) -> list[Report]:
    """Every session of a wild-torch run (each run holds two profiling cycles), analysed once."""
    if not (SHARED_PROFILES / "wild-torch").is_dir():
        pytest.skip("../shared/profiles is not beside this checkout")
    if run not in _SESSIONS:
        _SESSIONS[run] = [session_report(s)
                          for s in discover(str(SHARED_PROFILES / "wild-torch")) if s.run == run]
    return _SESSIONS[run]


def _wild_torch(run: str) -> Report:
    """The run's first session whose launch-bound finding is critical (resnet50_num_workers_4's 18% wait)."""
    rs = _wild_torch_all(run)
    return next((r for r in rs if any(f.rule == "launch_bound" and f.severity == "critical"
                                       for h in r.hosts for f in h.findings)), rs[0])


# --------------------------------------------------------------------------- card-quiet, ruled-out: the replay note


@pytest.mark.parametrize("run", ["jax_train_block_until_ready", "jax_train_float_loss"])
def test_the_launch_card_names_the_note_its_check_gave(run):
    r = run_report(FIXTURES / "h200_waits", run)
    (h,) = r.hosts
    note = _only(r, "launch_bound")
    assert note.severity == "info" and "graph replay" in note.title
    said = _card(r, "launch_wait_share").detail["not_flagged"]
    assert note.title in said and "below this check's level" not in said
    assert not card_quiet_problems(h.host, h)


def test_a_card_that_does_not_fire_keeps_its_reason():
    """Control: cloverleaf_a100_cuda's 16-bit card is past its level and mixed_precision_off gave no
    finding: the card keeps the reason that held the rule back -- a native program's, where the rule never runs
    (h37-words24: its "MatMul/Conv kernels are 0.0%" read library names a program's own kernels need not carry)."""
    from tb_gpu_advisor.frameworks import native

    r = run_report(FIXTURES / "wild", "cloverleaf_a100_cuda")
    said = _card(r, "sixteen_bit_share").detail["not_flagged"]
    assert said == native.FRAMEWORK.not_applicable["mixed_precision_off"], said
    assert not [f for f in r.hosts[0].findings if f.rule == "mixed_precision_off"]


def test_a_card_denying_its_checks_note_is_caught():
    r = copy.deepcopy(run_report(FIXTURES / "h200_waits", "jax_train_block_until_ready"))
    _card(r, "launch_wait_share").detail["not_flagged"] = "the rest is below this check's level"
    assert any(v.startswith("card-quiet") for v in report_violations(r))


@pytest.mark.parametrize("run", ["jax_train_block_until_ready", "jax_train_block_until_ready_annotated"])
def test_a_jitted_step_is_not_told_to_jit_before_its_replays(run):
    """The step is one jitted program whose kernels all replay from XLA's command buffers: the wait before the
    replays is told to keep dispatch asynchronous and to run several steps per call, never to jit the step."""
    r = run_report(FIXTURES / "h200_waits", run)
    (h,) = r.hosts
    f = _only(r, "launch_bound")
    texts = " ".join(a.text for a in f.actions)
    assert "jit the whole step" not in texts and "un-jitted" not in texts
    assert "asynchronous" in texts and "lax.scan" in " ".join(a.snippet or "" for a in f.actions)
    assert not ruled_out_fix_problems(h.host, h.findings)


def test_eager_jax_is_still_told_to_jit():
    """Control: real-h100-jax's launch_bound_eager launches each op on its own (no replay): jit the whole step."""
    if not (SHARED_PROFILES / "real-h100-jax").is_dir():
        pytest.skip("../shared/profiles is not beside this checkout")
    f = _only(run_report(SHARED_PROFILES / "real-h100-jax", "launch_bound_eager"), "launch_bound")
    assert "replay" not in f.title
    assert any("jit the whole step" in a.text for a in f.actions)


def test_a_fix_the_replay_note_rules_out_is_caught():
    r = copy.deepcopy(run_report(FIXTURES / "h200_waits", "jax_train_block_until_ready"))
    f = _only(r, "launch_bound")
    f.actions[0].text = "jit the whole step as one function, so XLA compiles and fuses it."
    assert any(v.startswith("ruled-out") for v in report_violations(r))


# --------------------------------------------------------------------------- one-name: the allocator's limit


def test_an_allocator_limit_near_the_whole_gpu_is_named_so():
    r = run_report(FIXTURES / "wild", "jax_mi355x")
    (h,) = r.hosts
    (g,) = [g for g in h.gpus if g.memory]
    cap = gb(g.memory["capacity_bytes"])
    assert g.memory["capacity_source"] == "allocator limit"
    text = " ".join(_only(r, "batch_size_headroom").summary.split())
    assert f"the {cap} limit of its allocator" in text and f"before its allocator's {cap} limit is 90% full" in text
    assert f"of its {cap}" not in text and "the GPU is 90% full" not in text
    assert not limit_name_problems(h.host, h)


def test_an_allocator_limit_beside_a_known_gpu_keeps_its_share():
    """Control: jax_mi300x knows its GPU's 192 GiB: the limit is named with its share of it, as before."""
    text = " ".join(_only(run_report(FIXTURES / "wild", "jax_mi300x"), "batch_size_headroom").summary.split())
    assert "the 144 GiB limit of its allocator, 75% of the GPU's 192 GiB" in text


def test_a_limit_called_the_gpus_own_is_caught():
    r = copy.deepcopy(run_report(FIXTURES / "wild", "jax_mi355x"))
    f = _only(r, "batch_size_headroom")
    cap = gb(r.hosts[0].gpus[0].memory["capacity_bytes"])
    f.summary = f.summary.replace(f"the {cap} limit of its allocator", f"its {cap}")
    assert any(v.startswith("one-name") for v in report_violations(r))


# --------------------------------------------------------------------------- words: sizes to three digits


@pytest.mark.parametrize("mib, said", [(1001, "0.98 GiB"), (1000, "0.98 GiB"), (999, "999 MiB"), (1019, "1.00 GiB")])
def test_a_size_keeps_three_significant_digits(mib, said):
    assert gb(mib << 20) == said


def test_the_snapshots_held_bytes_read_in_three_digits():
    # the activations finding (its attention's softmaxes are a finding of their own since h37-survey41m)
    (f,) = [f for h in run_report(FIXTURES / "wild", "snapshot_windows_gpt").hosts for f in h.findings
            if f.rule == "activation_memory" and "#" not in f.id]
    text = " ".join(f.summary.split())
    assert "1001 MiB" not in text and "0.98 GiB is held across steps" in text
    assert not words_problems(f.id, text)
    assert words_problems("x", "(1001 MiB is held across steps)")


# --------------------------------------------------------------------------- fix-twice, premise: PyTorch 1.8-1.10


@pytest.mark.parametrize("run", ["resnet50_num_workers_0", "resnet50_num_workers_4"])
def test_an_old_pytorchs_launch_saving_rests_on_a_fix_it_gives(run):
    """The saving assumes one launch a step, a graph's: the fixes now give that graph (make_graphed_callables,
    noted as PyTorch 1.10 on, since the trace dates 1.8-1.10), and name the batch size once."""
    for r in _wild_torch_all(run):
        (h,) = r.hosts
        f = _only(r, "launch_bound")
        assert "a graph's" in f.saving.assumption
        code = "\n".join(a.snippet or "" for a in f.actions)
        assert "make_graphed_callables" in code and "PyTorch 1.10 or newer" in code
        assert sum("raise the batch size" in a.text.lower() for a in f.actions) == 1
        assert not premise_fix_problems(h.host, h.findings) and not fix_twice_problems(h.host, h.findings)


def test_a_saving_with_no_fix_behind_it_is_caught():
    r = copy.deepcopy(_wild_torch("resnet50_num_workers_4"))
    f = _only(r, "launch_bound")
    f.actions = [a for a in f.actions if "graph" not in (a.text + (a.snippet or "")).lower()]
    assert any(v.startswith("premise") for v in report_violations(r))


def test_a_lever_told_twice_is_caught():
    r = copy.deepcopy(_wild_torch("resnet50_num_workers_4"))
    f = _only(r, "launch_bound")
    f.actions.append(copy.deepcopy(f.actions[-1]))
    f.actions[-1].text = "Or " + f.actions[-1].text[0].lower() + f.actions[-1].text[1:]
    assert any(v.startswith("fix-twice") for v in report_violations(r))


def _legacy(tmp_path: Path, version: str):
    doc = job_doc("tiny_ops")
    doc["metadata"] = {"torch_env_info": {"torch_version": version}}
    return report(tmp_path, doc, "tiny_ops")


def test_an_old_pytorchs_fix_names_no_version_but_the_jobs(tmp_path):
    """PyTorch 1.13 (stated): the job line says so, and the legacy fix no longer says 1.8-1.10."""
    rep = _legacy(tmp_path, "1.13.1")
    assert rep.job["version"] == "PyTorch 1.13"
    assert any("torch.jit.script" in (a.snippet or "") for f in rep.findings for a in f.actions)
    assert not version_said_problems(rep.host, rep)
    assert not any("1.8-1.10" in a.text for f in rep.findings for a in f.actions)


def test_a_version_said_against_the_job_is_caught(tmp_path):
    rep = _legacy(tmp_path, "1.13.1")
    f = next(f for f in rep.findings if f.actions)
    f.actions[0].text += " (this trace was written by PyTorch 1.8-1.10)"
    assert any(v.startswith("version-said") for v in version_said_problems(rep.host, rep))


# --------------------------------------------------------------------------- waits-at: where the others wait


def test_gpus_that_wait_outside_the_allreduce_are_not_said_to_wait_in_it():
    """demo multi_gpu_gpu0_oversubscribed: the other GPUs spend no more in the AllReduce than GPU0 (149 vs 150 us);
    their wait is the rest of their step (3.45 ms, the ranks table's "other ms")."""
    r = run_report(DEMO_LOGS, "multi_gpu_gpu0_oversubscribed")
    (h,) = r.hosts
    text = " ".join(_only(r, "gpu_imbalance").summary.split())
    assert "at the AllReduce" not in text and "outside the collectives" in text
    assert "3.45 ms per step (GPU0 143 us)" in text
    assert not waits_at_problems(h.host, h.findings)


def test_gpus_that_wait_in_the_allreduce_are_said_to():
    """Control: pytorch_ddp_straggler's other GPUs spend 1.32 ms a step in collectives beside GPU2's 150 us."""
    r = run_report(DEMO_LOGS, "pytorch_ddp_straggler")
    text = " ".join(_only(r, "gpu_imbalance").summary.split())
    assert "every replica waits for it at the AllReduce (the others spend 1.32 ms per step in collectives" in text


def test_a_wait_at_the_allreduce_its_numbers_do_not_show_is_caught():
    r = copy.deepcopy(run_report(DEMO_LOGS, "pytorch_ddp_straggler"))
    f = _only(r, "gpu_imbalance")
    f.summary = f.summary.replace("the others spend 1.32 ms", "the others spend 149 us")
    assert any(v.startswith("waits-at") for v in report_violations(r))
