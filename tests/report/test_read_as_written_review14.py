"""Kept reports read as their user reads them (issue #37, h37-review14): sentences that contradicted their own numbers
or another line of the same report, each now a property of ``tests/support/properties.py`` walked over every report
(or every related diff) by ``tests/report/test_properties.py`` (each failed on main 326696ca):

* ``card-noise`` -- the h200_waits twins torch_unrecorded_host_work -> _numpy_read: "Step time ... no change beyond the
  noise (±3.30 ms)" above headline rows "Waiting for input 29.2% -> 26.7% better" (its time rose, 4.77 -> 5.05 ms:
  the share fell because the step grew, by a change the step calls noise) and "16-bit kernel time 67.7% -> 67.8%
  better".
"""

from __future__ import annotations

import re

from tb_gpu_advisor.model.schema import Report
from tb_gpu_advisor.report.diff import diff_reports
from tests.support.burst_loops import PARTLY_OUTSIDE_GAPS, WHOLLY_OUTSIDE_GAPS, burst_loop
from tests.support.paths import FIXTURES, SHARED_PROFILES
from tests.support.properties import card_noise_problems
from tests.support.run_report import run_report
from tests.support.report_store import session_report

import pytest
from pathlib import Path

WILD = FIXTURES / "wild"
WAITS = FIXTURES / "h200_waits"


# --------------------------------------------------------------------------- card-noise


def test_a_card_within_the_steps_noise_is_neither_better_nor_worse():
    base, new = run_report(WAITS, "torch_unrecorded_host_work"), run_report(WAITS, "torch_unrecorded_host_work_numpy_read")
    d = diff_reports(base, new)
    assert d.step.verdict == "unchanged"
    cards = {m.id: m for m in d.headline if m.base is not None and m.new is not None}
    assert cards and all(m.better is None and m.beyond_noise is False for m in cards.values())
    assert not card_noise_problems(d.to_dict())


@pytest.mark.skipif(not (SHARED_PROFILES / "real-h100-torch").is_dir(), reason="../shared/profiles absent")
def test_a_card_that_moved_past_the_noise_keeps_its_direction():
    """Control: fp32 -> bf16 moves the 16-bit card from none to nearly all kernel time, far past any noise."""
    sets = SHARED_PROFILES / "real-h100-torch"
    d = diff_reports(run_report(sets, "torch_fp32"), run_report(sets, "torch_healthy_bf16"))
    card = {m.id: m for m in d.headline}["sixteen_bit_share"]
    assert card.better is True and card.beyond_noise is True
    assert not card_noise_problems(d.to_dict())


def test_the_card_noise_property_catches_a_direction_inside_the_noise():
    base, new = run_report(WAITS, "torch_unrecorded_host_work"), run_report(WAITS, "torch_unrecorded_host_work_numpy_read")
    d = diff_reports(base, new).to_dict()
    for m in d["headline"]:  # main's rows: a direction read from the two values alone
        if m["base"] is not None and m["new"] is not None and m["new"] != m["base"]:
            m["better"] = m["new"] > m["base"]
    problems = card_noise_problems(d)
    assert any("'16-bit kernel time'" in p for p in problems), problems


# --------------------------------------------------------------------------- words: "per step" said once


def _rule(r, rule: str):
    (f,) = [f for h in r.hosts for f in h.findings if f.rule == rule]
    return f


def _said(f) -> str:
    return " ".join(f.summary.split())


@pytest.mark.parametrize("where, run", [(WAITS, "torch_numpy_read"), (FIXTURES / "h200_jobs", "hf_generate_llama")])
def test_the_top_offenders_time_is_not_said_per_step_twice(where, run):
    """Main: "3 calls per step taking 15 us per step" (cloverleaf_a100_cuda, whose launch wait h37-pexsi booked to its
    uploads' staging) -- the count already said what the time is of.  hf_generate_llama's decode ("mul, 49 calls per
    step taking 112 us") in place of jax_mi300x since h37-calls67, whose launch finding its host-bound finding holds."""
    from tests.support.properties import words_problems

    f = _rule(run_report(where, run), "launch_bound")
    assert "Top offender:" in _said(f)
    assert not [p for p in words_problems(f.id, _said(f)) if "twice" in p], _said(f)


def test_a_one_step_offender_keeps_its_words():
    """Control: a capture of one step said it once already ("1 call in the step taking 18 us")."""
    f = _rule(run_report(WILD, "amd_mi250"), "launch_bound")
    assert "1 call in the step taking 18 us, ~17.6 us each" in _said(f)


def test_the_words_property_catches_per_step_twice():
    from tests.support.properties import words_problems

    assert words_problems("x", "Top offender: k, 3 calls per step taking 15 us per step, ~5.0 us each")
    assert not words_problems("x", "3 calls per step taking 15 us, ~5.0 us each; 91 us per step")


# --------------------------------------------------------------------------- one spelling of a binary unit


def test_the_report_and_the_listing_spell_kibibytes_alike():
    """Main: the report's sizes said "12.0 kiB" (``common.fmt.gb``), ``report --list`` "6.6 KiB"
    (``formats.base.human_size``): two homes of one unit.  IEC 80000-13 spells it KiB."""
    from tb_gpu_advisor.common.fmt import gb
    from tb_gpu_advisor.formats.base import human_size
    from tests.support.properties import words_problems

    assert gb(12 * 1024).split()[1] == human_size(12 * 1024).split()[1] == "KiB"
    assert gb(3 << 20).endswith("MiB") and human_size(3 << 20).endswith("MiB")  # control: the larger units as before
    assert words_problems("x", "peak 32.0 kiB") and not words_problems("x", "peak 32.0 KiB")


# --------------------------------------------------------------------------- recorded-minority


def test_a_finding_on_the_recorded_minority_of_launches_is_not_critical():
    """Main: nvllm_gb10_lost_tail's small-grid finding CRITICAL on the 143 of 24,944 launches that kept a record."""
    from tests.support.properties import recorded_minority_problems

    r = run_report(WILD, "nvllm_gb10_lost_tail")
    f = _rule(r, "small_grid")
    assert f.severity == "warning" and f.metric.status == "warning"
    assert "rests on the recorded part of the window alone, 0.6% of the kernel launches" in _said(f)
    assert f.saving.ms_per_step > 4.0  # the bound itself is unchanged: graded, not re-measured
    assert not recorded_minority_problems("x", r.hosts[0].findings)
    f.severity = "critical"  # main's grade: the property names it
    assert recorded_minority_problems("x", r.hosts[0].findings)
    f.severity = "warning"


def test_a_capture_that_kept_its_records_keeps_its_criticals():
    """Control: cuda_reduce_baseline (Nsight, as nvllm) lost no launch's record; its criticals stand."""
    r = run_report(WILD, "cuda_reduce_baseline")
    assert not any(f.metric is not None and f.metric.id == "lost_launch_share" for f in r.hosts[0].findings)
    assert any(f.severity == "critical" for f in r.hosts[0].findings)


# --------------------------------------------------------------------------- a window's length, or that it has none


def test_a_window_without_a_length_says_it_has_none(tmp_path):
    """Main: failed_start_dynamicvit "This window holds no GPU work" where its siblings say "This 0.88 s window": its
    file holds no timed event, so the length is unknown, and the sentence now says so."""
    import shutil

    def said(name):
        run = tmp_path / name
        run.mkdir()
        shutil.copy(FIXTURES / "nsys_windows" / f"{name}.sqlite", run / "report.sqlite")
        r = run_report(tmp_path, name)
        return " ".join(r.hosts[0].findings[0].summary.split())

    assert said("failed_start_dynamicvit").startswith("This window (of no recorded length) holds no GPU work")
    # control; its length in ``ms()``'s unit, as every window's (h37-schedfit: a 0.8 ms window read "0.00 s")
    assert said("startup_climate_unet").startswith("This 880.0 ms window holds no GPU work")


# --------------------------------------------------------------------------- words: a count to a tenth


@pytest.mark.parametrize("run, averaged", [("llamacpp_rocprof_r9700", True), ("rocprof_aiter_mi355x", False),
                                         ("nvfuser_h200_gtest", False)])
def test_the_mfu_cards_kernel_count_is_printed_to_a_tenth(run, averaged):
    """Main: "n/a: 0.877 matmul/conv kernels ran on average per step and GPU (51 us)" -- counts per step are printed
    to a tenth everywhere else ("7.5 calls per step on average").  The kernel and the gtest windows are one pass
    each since h37-windows2 (their bursts are no iterations): a whole count, said without "on average"."""
    from tests.support.properties import words_problems

    r = run_report(WILD, run)
    (mfu,) = [m for m in r.hosts[0].headline if m.id == "mfu"]
    text = " ".join(str(v) for v in vars(mfu).values() if isinstance(v, str))
    assert ("matmul/conv kernels ran on average per step and GPU" in text) == averaged, text
    # a pass the capture marks no step in counts in the pass, not "per step" (h37-words20)
    assert averaged or re.search(r"\b\d+ matmul/conv kernels? ran in the pass \(", text), text
    assert not words_problems(run, text), text
    assert words_problems("x", "0.877 matmul/conv kernels ran on average")


@pytest.mark.parametrize("run", ["nvllm_gb10_lost_tail", "cloverleaf_a100_cuda"])
def test_the_periods_gap_between_launches_is_printed_as_every_time(run):
    """Main: "(13.8 ms typical pause, against 0.0053 ms between launches)": a time of microseconds printed in ms to
    four decimals, where every other time of the report is ``common.fmt.ms``'s ("5 us")."""
    from tests.support.properties import words_problems

    h = run_report(WILD, run).hosts[0]
    said = " ".join(h.job["summary"].split())
    assert "between launches" in said and " us between launches" in said
    assert not words_problems(run, said)
    assert words_problems("x", "against 0.0053 ms between launches")


# --------------------------------------------------------------------------- no-step-time, a gap's part of its own mean


def _burst_loop(root: Path, gaps: list[float]) -> Report:
    """A generated loop read as GPU-burst steps (``tests.support.burst_loops``: the truth by construction)."""
    r = burst_loop(root, gaps)
    assert r.hosts[0].steps["source"] == "gpu_busy_clusters"
    return r


def test_a_gap_partly_inside_the_steps_says_which_part_it_saves(tmp_path):
    """Main (on rocprof_aiter_mi355x, read then as 4 GPU-burst steps): "this gap lies between them, outside every
    step's window (123.6% of it): no step's time holds it" beside "saves ~7.84 ms/step": the outside part was a mean
    over the gaps set against the mean gap over the steps, and the gaps inside the guessed steps are the saving.
    That capture is now one pass (its truth: a cold start, no steps; h37-windows2), so the vehicle is generated."""
    from tests.support.properties import no_steps_time_problems

    r = _burst_loop(tmp_path, PARTLY_OUTSIDE_GAPS)
    h = r.hosts[0]
    assert h.steps["count"] == 5
    f = _rule(r, "step_gaps")
    detail = f.metric.detail
    assert detail["avg_gap_ms"] == pytest.approx(116.0, abs=0.05)
    assert detail["outside_steps_ms"] == pytest.approx(80.0, abs=0.05)  # a part of its whole
    assert "outside every step's window (69.0% of it)" in _said(f)
    assert f.saving.ms_per_step == pytest.approx(36.0, abs=0.05)
    assert "the part of the gaps inside the steps' windows" in f.saving.assumption
    assert not no_steps_time_problems("x", h.findings)


def test_a_gap_wholly_outside_the_steps_saves_none(tmp_path):
    """Control (h37-left37's reading): a gap wholly between the steps keeps its words, "no step's time holds it", and
    saves ~0; the property holds a finding saying so to a saving of ~0 -- the partly-inside finding, its saving kept,
    with main's words, is named."""
    import copy

    from tb_gpu_advisor.rules.step_gaps import gap_inside_steps
    from tests.support.properties import no_steps_time_problems

    assert not gap_inside_steps(100.0, 100.0) and gap_inside_steps(108.0, 100.1)
    whole = _rule(_burst_loop(tmp_path / "wholly", WHOLLY_OUTSIDE_GAPS), "step_gaps")
    assert whole.metric.detail["outside_steps_ms"] == pytest.approx(whole.metric.detail["avg_gap_ms"], abs=0.05)
    assert "outside every step's window (100.0% of it): no step's time holds it" in _said(whole)
    assert whole.saving.ms_per_step < 0.01 and not no_steps_time_problems("x", [whole])
    f = copy.deepcopy(_rule(_burst_loop(tmp_path / "partly", PARTLY_OUTSIDE_GAPS), "step_gaps"))
    f.summary = f.summary.replace("no step's time holds that part", "no step's time holds it")  # main's words
    assert no_steps_time_problems("x", [f])
    f.saving.percent_of_step = 0.0
    assert not no_steps_time_problems("x", [f])


@pytest.mark.parametrize("capture", ["rocprof_aiter_mi355x", "nvfuser_h200_gtest"])
def test_the_old_burst_vehicles_read_as_their_truth_one_pass(capture):
    """The two captures these tests once rode (4 and 6 GPU-burst steps) are one pass each since h37-windows2: their
    truth (TRUTH.json's notes) is a cold start with nothing steady, no steps."""
    steps = run_report(WILD, capture).hosts[0].steps
    assert (steps["source"], steps["count"]) == ("whole_capture", 1)


def test_the_words_property_catches_a_part_above_it():
    from tests.support.properties import words_problems

    assert words_problems("x", "outside every step's window (123.6% of it): no step's time")
    assert not words_problems("x", "outside every step's window (92.7% of it): no step's time")


# --------------------------------------------------------------------------- a window's ends, told apart


ROCPD_LOCAL = Path("/work/main/.robustness/rocprof/ck_batched_gemm_rocpd_mi300x")


def test_a_short_windows_ends_are_told_apart():
    """Main: a window's ends printed to 0.1 ms whatever its length -- a rocpd capture's 20 us step (read locally)
    read "[2512.4 – 2512.4 ms]".  ``common.fmt.ms_span`` is the one home of the digits, the text's Trace line too."""
    from tb_gpu_advisor.common.fmt import ms_span

    assert ms_span(2512.38, 2512.40, " – ") == "2512.38 – 2512.40 ms"  # main: "2512.4 – 2512.4 ms"
    assert ms_span(120.0, 160.0) == "120.0–160.0 ms"  # control: a window that 0.1 ms tells apart
    assert ms_span(297.6, 297.6) == "297.6–297.6 ms"  # control: an instant (the OOM) has one time


@pytest.mark.skipif(not ROCPD_LOCAL.is_dir(), reason="the local rocpd capture (not kept) is absent")
def test_a_rocpd_captures_short_step_window_is_told_apart():
    import re

    from tb_gpu_advisor.report import render
    from tests.support.properties import window_ends_problems

    r = run_report(ROCPD_LOCAL.parent, ROCPD_LOCAL.name)
    assert not window_ends_problems("x", r.findings)
    assert not re.search(r"\[(\d+\.\d+) – \1 ms\]", render.to_text(r))
    assert "[2512.38 – 2512.40 ms]" in render.to_text(r)


# --------------------------------------------------------------------------- vendor words: the GPU tracer


@pytest.mark.parametrize("gpu,said", [("AMD Instinct MI300X", "roctracer / rocprofiler-sdk"), ("Intel(R) Data Center GPU Max 1550", "PTI")])
def test_the_clock_fix_names_the_vendors_tracer(gpu, said):
    """Main: a rocprof capture of an MI300A (hip_vector_add, read locally) told "use a current driver and profiler
    (CUPTI)" -- NVIDIA's tracer; the devices own the word, the clock-skew note asks for it."""
    from tb_gpu_advisor import devices
    from tb_gpu_advisor.rules.capture_quality import SAME_CLOCKS
    from tests.support.contradictions import _foreign

    text = devices.words([gpu], SAME_CLOCKS.text)
    assert said in text and "CUPTI" not in text
    assert _foreign(devices.vendor_of([gpu]).VENDOR, SAME_CLOCKS.text)  # the property names main's word
    assert "(CUPTI)" in devices.words(["NVIDIA H100 80GB HBM3"], SAME_CLOCKS.text)  # control: NVIDIA's own


ROCPROF_LOCAL = Path("/work/main/.robustness/rocprof/hip_vector_add_mi300a")


@pytest.mark.skipif(not ROCPROF_LOCAL.is_dir(), reason="the local rocprof capture (not kept) is absent")
def test_a_rocprof_captures_clock_note_speaks_amds_words():
    from tests.support.contradictions import vendor_words_problems

    r = run_report(ROCPROF_LOCAL.parent, ROCPROF_LOCAL.name)
    assert any(f.metric is not None and f.metric.id == "clock_skew_us" for f in r.findings)
    assert not vendor_words_problems(r)


# --------------------------------------------------------------------------- untimed-verdict


@pytest.mark.parametrize("logdir,run", [(FIXTURES / "wild", "snapshot_compiled_gpt2"),
                                        (FIXTURES / "wild", "snapshot_inference_gpt")])
def test_a_snapshot_is_never_called_healthy(logdir, run):
    """Main: "(1 host, no step timed)" above "FINDINGS: Healthy: no check of the guide fired" -- a snapshot records
    memory and no GPU work, so the time checks could not run."""
    from tb_gpu_advisor.report.verdict import verdict
    from tests.support.properties import untimed_verdict_problems

    r = run_report(logdir, run)
    assert verdict(r).startswith("No memory check fired; the capture records memory and no GPU work"), verdict(r)
    assert not untimed_verdict_problems(r)


def test_a_timed_capture_with_memory_can_still_be_healthy():
    """Control: h200_memory/torch_mem_activations times its kernels and records memory: still "Healthy"."""
    from tb_gpu_advisor.report.verdict import memory_only, verdict

    r = run_report(FIXTURES / "h200_memory", "torch_mem_activations")
    assert memory_only(r.hosts[0]) is None and verdict(r).startswith("Healthy: no check of the guide fired")


# --------------------------------------------------------------------------- says-why: the job's gradient kernels


def test_a_gradient_kernel_named_for_the_job_says_why(tmp_path):
    """Main, the Megatron NVTX form (``synthetic/autograd_nvtx.py`` ``megatron``, no op ranges): "kernels only a backward
    pass runs: `at::native::vectorized_elementwise_kernel<…>`" -- the short name hid ``threshold_backward_kernel``."""
    from synthetic import autograd_nvtx as A
    from tests.support.properties import evidence_says_why_problems

    (tmp_path / "megatron").mkdir()
    A.write(str(tmp_path / "megatron" / "report.sqlite"), form="megatron")
    h = run_report(tmp_path, "megatron").hosts[0]
    assert "(`threshold_backward_kernel`)" in h.job["kind_evidence"], h.job["kind_evidence"]
    assert not evidence_says_why_problems("x", h)
    main = dict(h.job, kind_evidence="kernels only a backward pass runs: `at::native::vectorized_elementwise_kernel<…>`")
    assert evidence_says_why_problems("x", type(h)(**{**vars(h), "job": main}))


def test_a_gradient_kernel_whose_name_says_why_is_named_as_it_was():
    """Control: mi210_gpu_only's `at::native::batch_norm_backward_kernel<…>` says it in its short name, first."""
    h = run_report(WILD, "mi210_gpu_only").hosts[0]
    assert h.job["kind_evidence"].startswith("kernels only a backward pass runs: `at::native::batch_norm_backward_kernel<…>`, ")


# --------------------------------------------------------------------------- no-bf16 on a GPU without it


@pytest.mark.skipif(not (SHARED_PROFILES / "wild-torch").is_dir(), reason="../shared/profiles absent")
def test_a_v100_is_told_of_no_bfloat16():
    """Main: resnet50_num_workers_0 (PyTorch 1.8-1.10 on a Tesla V100) "bfloat16 autocast on the GPU needs 1.10 or
    newer" in its legacy float16 autocast fix, to a GPU without bfloat16."""
    from tests.support.properties import no_bf16_problems

    from tb_gpu_advisor.discover.logdir import discover
    
    sessions = [s for s in discover(str(SHARED_PROFILES / "wild-torch")) if s.run == "resnet50_num_workers_0"]
    for s in sessions:
        h = session_report(s).hosts[0]
        f = next(f for f in h.findings if f.rule == "mixed_precision_off")
        assert "float16 autocast" in f.actions[0].text and "torch.cuda.amp" in f.actions[0].text
        assert not no_bf16_problems("x", h)
    assert sessions


def test_a_v100_may_be_told_it_has_no_bfloat16():
    """Control: compiled_v100_param_allreduce's "(this GPU has fp16 Tensor Cores but none for bfloat16)" stands."""
    from tests.support.properties import no_bf16_problems

    r = run_report(WILD, "compiled_v100_param_allreduce")
    assert "none for bfloat16" in _rule(r, "mixed_precision_off").actions[0].text
    assert not no_bf16_problems("x", r.hosts[0])


# --------------------------------------------------------------------------- words: one engine step's event


@pytest.mark.parametrize("run", ["sglang_mi300x_decode", "sglang_b300_decode", "sglang_mi300x_prefill"])
def test_one_engine_steps_event_is_singular(run):
    """Main: "SGLang's engine steps: 1 `step[DECODE bs=32]` host events enclosing 99% of the GPU work's launches"."""
    from tests.support.properties import words_problems

    h = run_report(WILD, run).hosts[0]
    note = " ".join(h.steps["note"].split())
    assert "1 `step[" in note and "` host event enclosing" in note, note
    assert not words_problems(run, note)
    assert words_problems("x", "1 `step[DECODE bs=32]` host events enclosing")


def test_a_real_reports_kibibytes_are_spelt_as_the_listings():
    """Main: h200_memory/torch_oom_snapshot "640 kiB cached but unallocated" beside ``report --list``'s "KiB"."""
    from tb_gpu_advisor.report import render
    from tests.support.properties import words_problems

    text = render.to_text(run_report(FIXTURES / "h200_memory", "torch_oom_snapshot"))
    assert "640 KiB cached but unallocated" in " ".join(text.split())
    assert not [p for p in words_problems("x", text) if "KiB" in p]
