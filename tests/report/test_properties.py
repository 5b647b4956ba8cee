"""Issue #36 deliverable 4: properties, not patterns -- ``tests/support/properties.py`` over every report we can make.

The walk covers what ``scripts/golden.py`` covers: the demo logs, the synthetic corpus (TensorFlow, JAX, PyTorch
scenarios, broken and fixed), every real set in ``tests/fixtures`` and every set of ``../shared/profiles`` with its lone
V100 file (skipped, with the reason, when ``../shared`` is absent), and the diffs of related pairs (a scenario and
its fix, FSDP before and after, fp32 and bf16).  Each report is analysed once per module, and a kept capture's once per
test run (``tests/support/report_store.py``: the other tests' analyses of it are reused, and theirs of this walk): 330
reports, 65 s in CI's main run where none was stored yet.

Each property failed on main before issue #36 on an example the issue names (the tests after the walk show the
checker catching each one, rebuilt on a report of today):

* ``part<=whole``: nsys/h100_fsdp_window "mostly H2D (450 copies, 1.84 s per step)" in a 969 ms step (the memcpy table
  summed the 2 GPUs); pytorch_ddp_straggler's roofline "aten::mm 5.94 ms/step" in a 3.74 ms step (4 GPUs summed); the
  FSDP diff's "matmul/conv 165,058.5 us/step" in a 149.9 ms step (kernel classes summed over GPUs);
  implicit_numpy_input "block the GPU for 612 us ... mostly H2D (1 copy, 632 us per step)"; torch_healthy_bf16
  "15 of 34 kernels per step (45.7%)" (15/34 is 44.1%);
* ``one-value``: pytorch_ddp_straggler's AllReduce, 1.324 ms per step in the session's table (median rank) and 1.030
  ms in node0's (a mean over GPUs);
* ``order``: nsys_a100_cloverleaf listed a warning saving 2.8% above an info finding saving 9.4%; v100 bert a
  warning saving 51.7% beside criticals saving 30.9% and 17.1%;
* ``every-fix``: "if every fix lands" left out info findings' savings on 37 hosts and sessions (torch_tiny_ops'
  xla_not_used, torch_healthy_bf16's launch_bound);
* ``agree``: the MCP capture advice said "can be trusted" on amd_mi250, cold_a100_alexnet, vllm_mi300x_capture and the
  cold_forward scenario, whose findings say the capture recorded warm-up;
* ``whole-count``: "7.5 calls" (cloverleaf), "1.6 copies" (saxpy), "1.0 calls" (ddp_2x8_slow_link) with no "on average";
* ``words`` (the h36 survey's miss 8): "1 calls per step" (compiled_a100_triton, event_sync_a100), "1 kernels"
  (cold_a100_alexnet, hf_generate_llama), "1 times" (the lone V100 BERT), "6.5 ms-6.5 ms" (amd_mi250's cold start),
  "could grow about 4636.8x" (nsfw_vit_h100) and 19 more factors of 4-5 digits;
* ``one-step`` (h37-left60): "11.7% of each 8.72 ms step" (sglang_b300_decode), "116 us per step in 32-bit"
  (gpt2_b200_one_step), "`forward` 4.99 ms ... a step" on hosts that kept one step (``tests/report/test_one_step_words``).
"""

from __future__ import annotations

import copy
import re
import time
from pathlib import Path

import pytest

from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.model.schema import Report, Table
from tb_gpu_advisor.report.diff import diff_reports
from tests.support.corpus import LONE, SETS, corpus
from tests.support.paths import DEMO_LOGS, FIXTURES, SHARED_PROFILES
from tests.support.properties import diff_violations, ledger_savings_violations, report_violations
from tests.support.report_store import session_report

#: related pairs (set, base run, new run) whose diff is checked, beside every corpus scenario and its "_fixed" run
PAIRS = [("nsys", "fsdp_mfu_before", "fsdp_mfu_after"), ("real-h100-torch", "torch_fp32", "torch_healthy_bf16"),
         ("real-h100-torch", "torch_input_bound", "torch_healthy_bf16"),
         ("real-h100-jax", "fp32_highest", "healthy_bf16"), ("real-h100-jax", "input_bound", "healthy_bf16"),
         ("wild-torch", "resnet50_num_workers_0", "resnet50_num_workers_4"),
         ("demo_logs", "input_bound", "input_bound_fixed"), ("corpus_torch", "ddp_straggler", "ddp_balanced"),
         ("corpus_torch", "fsdp_no_prefetch", "fsdp_prefetch"),
         ("fixtures/h200_waits", "torch_unrecorded_host_work", "torch_unrecorded_host_work_numpy_read")]


def _corpus(out: Path) -> dict[str, Path]:
    """The synthetic corpus scripts/golden.py writes: this test run's (``tests/support/corpus.py``), else into
    ``out``."""
    return {name: corpus(name, out) for name in SETS}


def _logdirs(tmp: Path) -> dict[str, Path]:
    sets = {"demo_logs": DEMO_LOGS, **_corpus(tmp / "corpus")}
    sets.update({f"fixtures/{p.name}": p for p in sorted(FIXTURES.iterdir()) if p.is_dir()})
    if SHARED_PROFILES.is_dir():
        sets.update({p.name: p for p in sorted(SHARED_PROFILES.iterdir()) if p.is_dir()})
        if any(SHARED_PROFILES.glob("*.xplane.pb")):  # a lone file: into a logdir's layout, this run's one copy
            sets[LONE] = corpus(LONE, tmp / "corpus")
    return sets


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[tuple[str, str], Report]:
    """(set, run) -> Report for every session of every logdir, analysed once (a kept capture's once per test run)."""
    t0 = time.monotonic()
    out = {}
    for name, logdir in _logdirs(tmp_path_factory.mktemp("properties")).items():
        for s in discover(str(logdir)):
            out[(name, s.run)] = session_report(s)
    print(f"{len(out)} reports in {time.monotonic() - t0:.1f} s")
    return out


def test_every_report_holds_every_property(reports):
    assert len(reports) >= 100, len(reports)  # demo, corpus, fixtures: the walk really walked
    bad = {f"{k[0]}/{k[1]}": v for k, r in reports.items() if (v := report_violations(r))}
    assert not bad, "\n".join(f"{k}: {x}" for k, v in bad.items() for x in v)


@pytest.fixture(scope="module")
def texts(reports) -> dict[tuple[str, str], str]:
    """(set, run) -> the report's text, rendered once for the checks of the text below."""
    from tb_gpu_advisor.report import render

    return {k: render.to_text(r) for k, r in reports.items()}


@pytest.fixture(scope="module")
def markdowns(reports) -> dict[tuple[str, str], str]:
    """(set, run) -> the report's markdown as ``render.to_markdown`` gives it by default, rendered once for the two
    checks that read it (the template slots and the vendor words: each rendered it again per report, ~5 ms each)."""
    from tb_gpu_advisor.report import render

    return {k: render.to_markdown(r) for k, r in reports.items()}


def test_every_text_report_says_one_value_per_quantity(reports, texts):
    """The text a user reads (h37-review2): the step "if every fix lands" starts from is the header's, the headroom's
    parts add up to their whole, a held idle is at most the idle it is part of, seconds are not printed as thousands
    of ms (``tests/support/contradictions.text_number_problems``; on main 24 of the kept real reports failed it)."""
    from tests.support.contradictions import text_number_problems

    bad = {f"{k[0]}/{k[1]}": v for k in reports if (v := text_number_problems(texts[k]))}
    assert not bad, "\n".join(f"{k}: {x}" for k, v in bad.items() for x in v)


def test_every_report_speaks_to_its_job(reports):
    """The words a job is told fit the job the report knows (issue #37, h37-left29;
    ``tests/support/contradictions.job_words_problems``): no "rank" to a job of one process, no training step's code
    to forward passes, a serving engine or work of no known kind, and "one trace per rank" kept for a rank of a job of
    several processes.  On main wild/gpu_events_stripped and wild/scattermoe_h200_item_sync (work of no known kind)
    were told to ``loss = train_step(x, y)`` in their host-sync fix; the job rules' fixes are held to it too
    (h37-left34: on main the corpus' tensor-parallel and MoE forwards were told DDP's ``.backward()`` and an
    optimizer's pipeline in ``comm_exposed``)."""
    from tests.support.contradictions import job_words_problems

    bad = {f"{k[0]}/{k[1]}": v for k, r in reports.items() if (v := job_words_problems(r))}
    assert not bad, "\n".join(f"{k}: {x}" for k, v in bad.items() for x in v)


def test_no_damaged_report_says_its_window_held_no_gpu_work(reports, texts):
    """A host whose file was read only in part never says its window held no GPU work -- not in its job block (which
    the tab reads), its job line or the report's title (``contradictions.damaged_words_problems``): the GPU's records
    may lie past the damage, as the damage finding says beside.  Fails on base caaafce2 for wild/two_writers_v100_gloo
    (h37-damage69: "no step: the window holds no GPU work" over 540 kernels past the damage)."""
    from tests.support.contradictions import damaged_words_problems

    bad = {f"{k[0]}/{k[1]}": v for k, r in reports.items() if (v := damaged_words_problems(r, texts[k]))}
    assert not bad, "\n".join(f"{k}: {x}" for k, v in bad.items() for x in v)


def test_every_report_names_memory_for_its_job(reports):
    """What holds a GPU's memory is named for the job the report knows (h37-memkind37 *Left* 1,
    ``tests/support/contradictions.memory_words_problems``): a job of forward passes only, or of no known kind whose
    memory shows no gradients and no optimizer step, is never told it holds "optimizer state" -- in its findings'
    tables, the tab's memory panel or the MCP server's tables.  On main 86c361e0 h200_jobs/jax_jit_inference's and
    every real inference snapshot's holders table said "Held across steps (parameters, optimizer state)"."""
    from tests.support.contradictions import memory_words_problems

    bad = {f"{k[0]}/{k[1]}": v for k, r in reports.items() if (v := memory_words_problems(r))}
    assert not bad, "\n".join(f"{k}: {x}" for k, v in bad.items() for x in v)


def test_every_report_fills_every_slot_of_its_templates(reports, texts, markdowns):
    """No template's slot reaches a user unfilled (h37-words37 *Left* 1; ``contradictions.unfilled_slot_problems``):
    ``rules.base._Said`` leaves a key no word fills as written, so a path that asked for a window fix without the
    capture's own words would print ``{traced}`` -- in the JSON, the text and the markdown alike."""
    from tests.support.contradictions import unfilled_slot_problems

    bad = {f"{k[0]}/{k[1]}": v for k, r in reports.items()
           if (v := unfilled_slot_problems(r, {"text": texts[k], "markdown": markdowns[k]}))}
    assert not bad, "\n".join(f"{k}: {x}" for k, v in bad.items() for x in v)


def test_every_report_speaks_of_the_window_it_holds(reports):
    """The words fit the window the report knows (h37-words20; ``tests/support/contradictions.window_words_problems``):
    a capture read as one pass names no "step 0" in its trace windows and counts no kernels "per step"; a capture that
    recorded nothing of the host claims no host time or host work in a title or window; a share of the pass is not
    said again of the capture window that pass is; a step that may be nothing but first calls does not call its host
    time dispatch.  On main: rocprof_aiter_mi355x ("unrecorded host time, step 0", "99.9% ... That is 99.9% of the
    432.6 ms capture window", "3 matmul/conv kernels ran per step and GPU"), compiled_a100_triton ("the dispatch of its
    2 top-level op calls" beside "may be the first call's one-time cost") and every one-pass capture's windows."""
    from tests.support.contradictions import _hostless, _one_unmarked_pass, window_words_problems

    hosts = [h for r in reports.values() for h in r.hosts]
    # the walk holds the windows the check is about, else it checks nothing (its patterns: test_window_words_checker)
    assert any(map(_one_unmarked_pass, hosts)) and any(map(_hostless, hosts))
    bad = {f"{k[0]}/{k[1]}": v for k, r in reports.items() if (v := window_words_problems(r))}
    assert not bad, "\n".join(f"{k}: {x}" for k, v in bad.items() for x in v)


def test_every_report_speaks_its_vendors_words(reports, markdowns):
    """No other vendor's words where a user reads them, nor its tools and APIs in what a host is told to do
    (``tests/support/contradictions.vendor_words_problems``), on every report of the walk, the PyTorch corpus on an
    Intel GPU (``corpus_xpu``) and the windows on each vendor's GPU (``corpus_vendors``) included: main told Intel GPUs of
    "Tensor Cores" (a table's title, a metric's source), "NVTX ranges", "device='cuda'" and "the CUDA sync debug mode"
    (h37-review9)."""
    from tests.support.contradictions import markdown_prose, vendor_words_problems

    assert any(k[0] == "corpus_xpu" for k in reports)
    # the windows that say most of the profiler and the runtime, on each vendor's GPU (h37-words63: on base 12 of its
    # 44 broke the law -- an Intel GPU told ``ProfilerActivity.CUDA``, "with CUDA activity on", "Ampere and newer";
    # an AMD GPU "the CUDA sync debug mode", "the window's only CUDA calls")
    assert sum(k[0] == "corpus_vendors" for k in reports) >= 48  # 12 windows x 4 forms
    bad = {f"{k[0]}/{k[1]}": v for k, r in reports.items()
           if (v := vendor_words_problems(r, markdown_prose(markdowns[k]), truth=_truth(k)))}
    assert not bad, bad


def _truth(key: tuple[str, str]) -> str | None:
    """The vendor a generated window's file shows by construction, whatever its report claims: ``unknown`` for the
    forms that name none (``torchtrace.as_unknown_vendor``); None (the report's own reading) for the rest.  Why: a
    window with no GPU record and no runtime call named no vendor, was read as NVIDIA's and told CUDA, CUPTI and
    Nsight -- consistent with its own claim, so the law saw nothing (h37-vendor66: 8 of the 24 such runs on base)."""
    return "unknown" if key[0] == "corpus_vendors" and key[1].startswith("unknown_") else None


def test_every_json_report_agrees_with_itself(reports):
    """The JSON an agent, the MCP server or CI reads (h37-review4): no vendor claimed with no GPU that ran work, one
    count of steps, a capture note saying the fields' numbers and the job's verdict, a steady state only outside a
    cold start, a metric coloured within its finding's severity (``tests/support/json_fields.json_field_problems``;
    on main 70 of the 113 kept real reports failed it)."""
    from tests.support.json_fields import json_field_problems

    bad = {f"{k[0]}/{k[1]}": v for k, r in reports.items() if (v := json_field_problems(r.to_dict()))}
    assert not bad, "\n".join(f"{k}: {x}" for k, v in bad.items() for x in v)


def test_every_related_diff_holds_its_properties(reports):
    pairs = [p for p in PAIRS if (p[0], p[1]) in reports and (p[0], p[2]) in reports]
    pairs += [("corpus_tf", run[:-6], run) for (s, run) in reports if s == "corpus_tf" and run.endswith("_fixed")]
    assert len(pairs) >= 12, pairs
    bad = []
    for s, a, b in pairs:
        base, new = reports[(s, a)], reports[(s, b)]
        bad += [f"{s}: {a} -> {b}: {x}" for x in diff_violations(diff_reports(base, new).to_dict(), base, new)]
    assert not bad, "\n".join(bad)


def test_the_shared_sets_are_walked_when_present(reports):
    if not SHARED_PROFILES.is_dir():
        pytest.skip(f"real captures (../shared/profiles) not here ({SHARED_PROFILES})")
    assert {"nsys", "real-h100-jax", "real-h100-torch", "wild-torch"} <= {s for s, _ in reports}


# --------------------------------------------------------------------------- the checker catches each example


@pytest.fixture(scope="module")
def straggler(reports) -> Report:
    return reports[("demo_logs", "pytorch_ddp_straggler")]


def _kinds(r: Report) -> set[str]:
    return {v.split(":")[0] for v in report_violations(r)}


def test_a_sum_over_gpus_printed_per_step_is_a_part_over_its_whole(straggler):
    r = copy.deepcopy(straggler)
    h = r.hosts[0]
    roof = h.roofline
    i = roof.columns.index("ms/step")
    roof.rows[0][i] = 5.94  # the 4 GPUs' aten::mm summed, in a 3.74 ms step (main before issue #36)
    assert "part<=whole" in _kinds(r)
    r = copy.deepcopy(straggler)
    f = r.findings[0]
    f.summary = "Copies block the GPU for 612 us of each 5.53 ms step (11.1%), mostly H2D (1 copy, 632 us per step)."
    assert any("larger than the whole" in v for v in report_violations(r))
    f.summary = "The GPU waits for launches; 15 of 34 kernels per step (45.7%) run shorter than 40 us."
    assert any("15/34 is 44.1%" in v for v in report_violations(r))


def test_one_quantity_with_two_values_is_caught(straggler):
    r = copy.deepcopy(straggler)
    comm = r.hosts[0].communication
    comm.rows[0][comm.columns.index("ms")] = 1.0305  # the mean over GPUs main printed beside the median rank's 1.324
    assert "one-value" in _kinds(r)
    r = copy.deepcopy(straggler)
    r.ranks.rows[0][r.ranks.columns.index("exposed comm ms")] += 0.5  # a rank's time that is not its GPU's ledger
    assert any("ranks table" in v for v in report_violations(r))


def test_an_unfilled_slot_is_caught_and_code_braces_are_not(straggler):
    """The slot law can fail: a fix's text with ``{traced}``, a snippet with a window fix's ``{program}``; a snippet's
    own dict or f-string braces are code, not a slot."""
    from tb_gpu_advisor.model.schema import Action
    from tests.support.contradictions import unfilled_slot_problems

    assert not unfilled_slot_problems(straggler)
    r = copy.deepcopy(straggler)
    f = r.hosts[0].findings[0]
    f.actions = [Action(text="Record again: the capture traced {traced}.", snippet="nsys profile {program}"),
                 Action(text="Log it.", snippet='print(f"{loss}"); cfg = {"steps": 10}')]
    bad = unfilled_slot_problems(r)
    assert any("'{traced}'" in b and ".text" in b for b in bad), bad
    assert any("'{program}'" in b and ".snippet" in b for b in bad), bad
    assert not any("{loss}" in b for b in bad), bad
    assert unfilled_slot_problems(r, {"text": "    nsys profile {program}"})[-1].startswith("text")


def test_a_note_saving_more_than_a_warning_ranked_below_it_is_caught(straggler):
    r = copy.deepcopy(straggler)
    a = next(f for f in r.findings if f.saving and f.saving.ms_per_step)
    b = copy.deepcopy(a)
    b.id, b.saving.ms_per_step, b.saving.percent_of_step = "other", a.saving.ms_per_step / 10, a.saving.percent_of_step / 10
    a.severity, b.severity, a.confidence, b.confidence = "info", "warning", "high", "high"
    r.findings = [b, a]  # the warning with the smaller saving first, as main ranked by severity tier
    kinds = [v for v in report_violations(r) if v.startswith("order")]
    assert any("ranked above" in v for v in kinds) and any("is info saving" in v for v in kinds)


def test_a_grade_the_saving_or_the_steps_do_not_earn_is_caught(straggler):
    r = copy.deepcopy(straggler)
    f = next(f for f in r.findings if f.saving and f.saving.ms_per_step and f.rule != "capture_quality")
    f.severity, f.confidence = "critical", "low"  # a critical number per guessed step
    f.saving.percent_of_step = max(f.saving.percent_of_step, 50.0)
    assert {v.split(": ", 2)[2] for v in report_violations(r) if v.startswith("severity")} == \
        {f"{f.id} is critical on low-confidence steps"}  # as the host's finding and the session's
    f.confidence, f.saving.percent_of_step = "high", 1.9  # fp32 GEMMs at 1.9% of a tiny step, graded a warning
    f.severity = "warning"
    assert any(v.startswith("severity") and f"{f.id} is warning but saves 1.90%" in v for v in report_violations(r))
    f.saving.percent_of_step = 5.0
    assert not [v for v in report_violations(r) if v.startswith("severity")]
    f.severity = "critical"  # critical for a twentieth of the step
    assert any(v.startswith("severity") and f"{f.id} is critical but saves 5.00%" in v for v in report_violations(r))


def test_every_fix_leaves_no_saving_out(straggler):
    r = copy.deepcopy(straggler)
    h = r.hosts[0]
    h.achievable = dict(h.achievable, findings=h.achievable["findings"][1:])
    assert "every-fix" in _kinds(r)


def test_capture_advice_and_verdict_agree_with_the_top_finding(straggler):
    r = copy.deepcopy(straggler)
    r.verdict = r.verdict.replace("top: ", "top: Something else ")
    assert "agree" in _kinds(r)


def test_a_fractional_count_must_say_it_is_an_average(straggler):
    r = copy.deepcopy(straggler)
    r.findings[0].summary += " The top offender runs 7.5 calls per step."
    assert "whole-count" in _kinds(r)
    r.findings[0].summary = r.findings[0].summary.replace("per step.", "per step on average.")
    assert "whole-count" not in _kinds(r)


@pytest.mark.parametrize("bad", ["1 calls per step", "the other 1 GPUs", "1 kernels per step", "1 host(s)",
                                 "1 launch(es)", "of 1.4 ms-1.4 ms with the GPU idle", "could grow about 4636.8x",
                                 "1 first-time runtime calls (`cudaMalloc`", "1 compilation spans"])
def test_numbers_are_read_as_a_person_writes_them(straggler, bad):
    """``words``: issue #36's polish and the h36 survey's miss 8 -- each phrase below was printed by main."""
    r = copy.deepcopy(straggler)
    r.findings[0].summary += f" It makes {bad}."
    assert "words" in _kinds(r)


@pytest.mark.parametrize("good", ["1 call per step", "1 ms", "1 class", "1 bus", "(PYTORCH_X=1 turns it off)",
                                  "of 1.4 ms-6.5 ms", "2 kernels", "run 14.8x faster", "about 4,600x", "11 calls",
                                  "1 first-time runtime call (`cudaMalloc`", "1 kernel launch of 3.06 s"])
def test_right_numbers_are_no_violation(straggler, good):
    r = copy.deepcopy(straggler)
    r.findings[0].summary += f" It makes {good}."
    assert "words" not in _kinds(r)


@pytest.mark.parametrize("evidence", ["a cold start: 1 kernel launch of 3.06 s-3.06 s",
                                      "some one-time costs: 1 first-time runtime calls (`cudaMemcpyToSymbol`, 77.0 ms)"])
def test_the_job_evidence_is_read_too(straggler, evidence):
    """The job's phase evidence as main printed it (h37-survey8: "1 first-time runtime calls", a noun of three words
    the one-word pattern missed)."""
    r = copy.deepcopy(straggler)
    r.hosts[0].job = dict(r.hosts[0].job, phase_evidence=evidence)
    assert "words" in _kinds(r)


def test_a_diff_of_sums_over_gpus_is_caught(straggler):
    d = {"base": {"step_ms": 149.9}, "new": {"step_ms": 120.0},
         "kernel_classes": [{"label": "matmul/conv", "base": 165_058.5, "new": 100_000.0}]}
    assert diff_violations(d, straggler, straggler)  # main's FSDP diff: the 2 GPUs' kernels summed per step
    d["kernel_classes"][0]["base"] = 82_529.0
    assert not diff_violations(d, straggler, straggler)


def test_tables_hold_shares_within_100_percent(straggler):
    r = copy.deepcopy(straggler)
    r.hosts[0].memcpy = Table("Memory copies per step", ["direction", "count/step", "ms/step", "sync share"],
                              [["h2d", 1, 0.1, 1.5]])
    assert any("over 100%" in v for v in report_violations(r))


def test_a_share_in_a_findings_detail_over_100_percent_is_caught(straggler):
    """h37-smallgrid: walk seed 3954 of ``--forms12`` held ``underfilled_kernel_share`` 1.528 in small_grid's detail
    (a 1.5 ms kernel counted whole in a 137 us step); a share there is a part of its whole whether or not the text
    prints it, and 95% is none."""
    r = copy.deepcopy(straggler)
    f = next(f for f in r.hosts[0].findings if f.metric is not None)
    f.metric.detail["underfilled_kernel_share"] = 0.95
    assert not any("underfilled_kernel_share" in v for v in report_violations(r))
    f.metric.detail["underfilled_kernel_share"] = 1.528
    assert any("underfilled_kernel_share is 1.5280" in v for v in report_violations(r))


def test_the_wait_for_the_last_gpu_is_the_ranks_tables(straggler):
    """pytorch_ddp_straggler: "the others spend 880 us more per step inside it" (the mean over all 4 GPUs, the late
    one included, less its own) beside the ranks table's 1.32 vs 0.15 ms: now the others' own mean excess, 1.17 ms."""
    import re

    f = next(f for f in straggler.findings if f.rule == "allreduce_slow")
    said = re.search(r"the others spend ([\d.]+) (us|ms) more", f.summary)
    t = straggler.ranks
    comm = sorted(float(r[t.columns.index("exposed comm ms")]) for r in t.rows)
    others = sum(comm[1:]) / (len(comm) - 1) - comm[0]
    assert said and float(said.group(1)) * (1e-3 if said.group(2) == "us" else 1.0) == pytest.approx(others, abs=0.006)


def test_a_ledger_that_does_not_add_up_is_caught(straggler):
    """Held on main already (every breakdown adds up to its step): kept so a new category cannot count time twice."""
    r = copy.deepcopy(straggler)
    g = r.hosts[0].gpus[0]
    g.breakdown = dict(g.breakdown, collectives=(g.breakdown.get("collectives") or 0.0) + 1.0)
    assert "ledger" in _kinds(r)


def test_a_low_confidence_finding_says_so_wherever_it_is_shown(straggler):
    """Issue #36 deliverable 3: the text said "low confidence (steps)", the markdown (PR comments, MCP) did not."""
    from tb_gpu_advisor.report import render

    f = copy.deepcopy(next(f for f in straggler.findings if f.saving))
    f.confidence = "low"
    assert "low confidence (steps)" in render.finding_markdown(f, 1)[1]
    f.confidence = "high"
    assert "confidence" not in render.finding_markdown(f, 1)[1]


def test_savings_recover_only_time_the_ledger_holds(reports):
    """Issue #36 deliverable 1: a strict xfail on main before it (11 findings: cold_a100_alexnet's host_sync claimed
    877 ms of launch wait where the step holds 1.9 ms, nsys_a100_saxpy_mpi's step_gaps 181 ms of host work where it
    holds 144 ms, v100 bert's sequential_gpus 14.9 ms of host work where it holds 2.3 ms).  Now part of
    report_violations too."""
    bad = {f"{k[0]}/{k[1]}": v for k, r in reports.items() if (v := ledger_savings_violations(r))}
    assert not bad, "\n".join(f"{k}: {x}" for k, v in bad.items() for x in v)


def test_memory_savings_over_the_peak_are_caught(reports):
    """``memory_savings_problems`` (h37-probe42k): the real CS336 forward's kept-forward and attention findings free
    8.16 + 1.41 GiB of a peak that holds less; with the overlap the attention finding states (h37-probe42m) the law
    holds, and without that sentence -- as on main ed6824fb -- it is caught."""
    from tests.support.properties import memory_savings_problems
    r = reports[("fixtures/wild", "snapshot_forward_rebound_autograd")]
    (h,) = r.hosts
    assert not memory_savings_problems(h)
    bad = copy.deepcopy(h)
    for f in bad.findings:
        f.summary = f.summary.split(" At least ")[0]
    assert any("memory savings" in v for v in memory_savings_problems(bad))


def test_a_saving_over_its_ledger_group_is_caught(straggler):
    r = copy.deepcopy(straggler)
    h = r.hosts[0]
    f = next(f for f in h.findings if f.saving and f.saving.recovers)
    f.saving.recovers = [{"group": "launch", "pool": "launch", "ms": (h.breakdown_ms.get("launch_wait") or 0.0) + 1.0}]
    assert any("of launch time, the step holds" in v for v in report_violations(r))


def test_a_saving_over_its_kernel_class_is_caught(straggler):
    """h37-ledger23: a saving of kernel time recovers no more than the step's kernels of the class its pool names take
    inside the steps (``kernel_classes``, as the ledger paints them) -- a part of ``device_compute`` finer than the
    group's law: fusing element-wise chains saves at most the non-matmul kernels' time, faster GEMMs at most the
    matmul/conv kernels'; and a finding's own kernel time of a class (its metric's detail: the fusible chains', an
    unfused attention run's matmuls and the kernels between them) is a part of that class's.  Checked on the 140 kept
    reports of session 23's base: 0 of 145 kernel-pool claims and 0 of 11 such details break them."""
    r = copy.deepcopy(straggler)
    h = r.hosts[0]
    f = next(f for f in h.findings if f.saving and f.saving.recovers and f.metric is not None)
    h.kernel_classes = [{"class": "matmul/conv", "kernels": 2, "launches_per_step": 2.0, "us_per_step": 900.0},
                        {"class": "elementwise", "kernels": 3, "launches_per_step": 3.0, "us_per_step": 60.0},
                        {"class": "reduction", "kernels": 1, "launches_per_step": 1.0, "us_per_step": 40.0},
                        {"class": "collective", "kernels": 1, "launches_per_step": 1.0, "us_per_step": 500.0}]
    f.saving.recovers = [{"group": "compute", "pool": "non_matmul_kernels", "ms": 0.099}]  # within 0.100 ms
    assert not any("kernel time, the step's" in v for v in report_violations(r))
    f.saving.recovers = [{"group": "compute", "pool": "non_matmul_kernels", "ms": 0.15}]  # the collectives are no part
    assert any("recovers 0.150 ms of other kernel time, the step's other kernels take 0.100 ms" in v
               for v in report_violations(r))
    f.saving.recovers = [{"group": "compute", "pool": "gemm_kernels", "ms": 0.5},
                         {"group": "compute", "pool": "tc_eligible_kernels", "ms": 0.5}]  # 1.0 ms of 0.9 ms matmuls
    assert any("of matmul kernel time" in v for v in ledger_savings_violations(r))
    # a finding's own kernel time of a class (its detail): the chains' 130 us of element-wise kernels where the
    # step's non-matmul kernels take 100 us inside it (tests/metrics/test_kernel_sums_in_steps.py, on main)
    f.metric.detail = dict(f.metric.detail or {}, chain_kernel_ms_per_step=0.1)
    assert not any("chain_kernel_ms_per_step" in v for v in report_violations(r))
    f.metric.detail["chain_kernel_ms_per_step"] = 0.13
    assert any("chain_kernel_ms_per_step 0.130 ms, the step's other kernels take 0.100 ms" in v
               for v in report_violations(r))


def test_if_every_fix_lands_never_exceeds_the_step(straggler):
    r = copy.deepcopy(straggler)
    h = r.hosts[0]
    step = h.achievable["step_ms"]
    h.achievable = dict(h.achievable, recoverable_ms=step * 1.2, achievable_step_ms=-0.2 * step)
    assert sum("'if every fix lands'" in v for v in report_violations(r)) == 2
    r = copy.deepcopy(straggler)
    h = r.hosts[0]
    h.achievable = dict(h.achievable, by_group=dict(h.achievable["by_group"], input=(h.breakdown_ms.get("input_wait")
                                                                                      or 0.0) + 1.0))
    assert any("recovers" in v and "of input time" in v for v in report_violations(r))


def test_a_per_step_figure_in_a_finding_over_the_step_per_gpu_is_caught(straggler):
    """corpus_tf/eager: "3.56 ms of host time in each 1.85 ms step" (nested eager ops counted twice) and
    ddp_launch_skew's 12.7 ms per step in syncs (4 ranks summed) before this change: caught by the details."""
    r = copy.deepcopy(straggler)
    f = next(f for f in r.hosts[0].findings if f.metric is not None)
    f.metric.detail = dict(f.metric.detail or {}, wait_ms_per_step=4 * r.hosts[0].achievable["step_ms"])
    assert any("wait_ms_per_step" in v for v in report_violations(r))


def test_ranges_named_past_the_findings_own_time_are_caught(reports):
    """``ranges<=claim`` (h37-left38): main's host-bound finding on ``wild/tiny_block_h100_infer`` claimed 668 us a
    step and named `Model Forward Pass` 604 us and `Self-Attention` 98 us as holding it -- 702 us; the finding of today
    names its share of each, which passes.  Since h37-left46 the step-gap finding books its gaps per kept step (two gaps
    over three steps), so the host-bound finding claims 733 us: the ranges below are over that."""
    r = copy.deepcopy(reports[("fixtures/wild", "tiny_block_h100_infer")])
    (f,) = [f for f in r.hosts[0].findings if f.rule == "unexplained_idle"]
    assert "ranges<=claim" not in _kinds(r)
    claim = sum(float(x["ms"]) for x in f.saving.recovers if x["pool"] == "host_own")
    assert claim == pytest.approx(0.733, abs=0.001)
    f.summary = re.sub(r"own ranges .*? a step", "own ranges `Model Forward Pass` 650 us, `Self-Attention` 120 us a step",
                       " ".join(f.summary.split()))
    assert any(v.startswith("ranges<=claim") and f.id in v for v in report_violations(r))


def test_gaps_that_outgrow_the_steps_holding_them_are_caught(reports):
    """``period`` (h37-left46): main's mordred sentence -- a 957.9 ms mean gap, all but 0.8 ms of it inside steps whose
    mean is 877.5 ms -- is caught; today's report of the same capture holds it (its gaps are per kept step)."""
    from tests.support.properties import period_problems

    r = copy.deepcopy(reports[("fixtures/wild", "mordred_rtx6000_hashjoin")])
    h = r.hosts[0]
    assert not period_problems(h.host, h)
    (f,) = [f for f in h.findings if f.rule == "step_gaps"]
    f.summary = ("The GPU is idle 957.9 ms between steps on average (max 4.66 s), 92.7% of the 1.03 s from one step's "
                 "start to the next (the mean step is 877.5 ms) outside input wait.")
    f.metric.detail["outside_steps_ms"] = 0.8
    assert any("over the 877.500 ms mean step" in v for v in period_problems(h.host, h))


def test_kernels_per_step_of_every_gpu_summed_are_caught(reports):
    """``per-gpu`` (h37-review8): a host of two GPUs whose finding counts both GPUs' kernels "per step" -- main's
    v100_bert read "1,086 of 1,330 kernels per step" beside one GPU's step, each GPU running 665 -- is caught; the
    report of today's two-GPU host (wild/tp_rtx4090_two_ranks) holds it."""
    from tests.support.properties import gpu_count_problems

    r = copy.deepcopy(reports[("fixtures/wild", "tp_rtx4090_two_ranks")])
    h = r.hosts[0]
    steps = h.steps["count"]
    per_gpu = [g.kernel_count / steps for g in h.gpus if g.kernel_count]
    assert len(per_gpu) == 2 and not gpu_count_problems(h.host, h)
    f = h.findings[0]
    f.summary += f" 10 of {sum(per_gpu):,.0f} kernels per step run shorter than 40 us."  # both GPUs', main's count
    assert any(v.startswith("per-gpu") and f.id in v for v in gpu_count_problems(h.host, h))
    f.summary = f.summary.replace(f"{sum(per_gpu):,.0f} kernels", f"{max(per_gpu):,.0f} kernels")  # one GPU's: holds
    assert not gpu_count_problems(h.host, h)


@pytest.mark.parametrize("rule, key", [("eager_execution", "eager_ops_per_step"), ("host_op_placement", "host_ops_per_step"),
                                       ("loss_scaling_gaps", "ops_per_step"), ("host_sync", "syncs_per_step")])
def test_counts_per_step_summed_over_ranks_are_caught(reports, rule, key):
    """``per-rank`` (h37-left59): a count a finding states per step over every rank of the host -- main's v100_bert
    read "849 TF ops per step run on the host" where each of its two replicas ran 424.5 -- is caught, for each count a
    finding states per step; the reports of today hold it (``test_every_report_holds_every_property``)."""
    from tests.support.properties import per_rank_problems

    h, f = next((h, f) for r in reports.values() for h in r.hosts for f in h.findings
                if f.rule == rule and f.metric is not None and isinstance((f.metric.detail or {}).get(key), (int, float))
                and f.metric.detail[key] > 0)
    h = copy.deepcopy(h)
    f = next(x for x in h.findings if x.id == f.id)
    assert not per_rank_problems(h)
    f.metric.detail[key] *= 2  # two ranks' count, each rank's step
    assert any(v.startswith("per-rank") and f.id in v for v in per_rank_problems(h))


def test_a_steps_note_missing_from_a_surface_is_caught(reports, monkeypatch):
    """``every-surface`` (h37-review8): the markdown report closed no host with its steps note, so the warm-up iteration
    wild/snapshot_adam_iterations drops (2 allocations, 16.2 MiB of one-time work) was the text report's alone; the
    markdown says it now, and a surface that leaves it out (main's markdown, rebuilt here) is caught."""
    from tb_gpu_advisor.report import render
    from tests.support.properties import surface_steps_problems

    r = reports[("fixtures/wild", "snapshot_adam_iterations")]
    assert "dropped the first step" in r.hosts[0].steps["note"] and not surface_steps_problems(r)
    assert "dropped the first step as warm-up" in " ".join(render.to_markdown(r).split())  # main: absent
    md = render.to_markdown
    monkeypatch.setattr(render, "to_markdown", lambda report, top=None: "\n".join(
        line for line in md(report, top=top).splitlines() if not line.startswith("**Steps on")))
    assert any(v.startswith("every-surface: markdown") for v in surface_steps_problems(r))


def test_a_window_past_the_capture_is_caught(reports):
    """``in-capture`` (h37-audit31): a window that runs past the capture's end is caught, one that ends with it is
    not (main opened mordred's "gap after step 7" 40 ms past its 6703.0 ms capture)."""
    r = copy.deepcopy(reports[("fixtures/wild", "mordred_rtx6000_hashjoin")])
    h = r.hosts[0]
    w = next(w for f in h.findings for w in f.windows)
    end = h.capture["window_start_ms"] + h.capture["length_ms"]
    w.end_ms = end
    assert not [v for v in report_violations(r) if v.startswith("in-capture")]
    w.end_ms = end + 40.0
    assert [v for v in report_violations(r) if v.startswith("in-capture")]
