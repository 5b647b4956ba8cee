"""The profiler's own cost where a finding rests on the host's time: a capture that recorded every Python call
(PyTorch's ``with_stack=True``) charges the host for each call's recording, so a host-bound, launch-bound or
step-gap finding says how many calls the step recorded, how much of its time they may cost -- bounded from the file
itself, by the least time two back-to-back calls take there (``metrics.capture._call_period_us``) -- and how to
measure without them.  A caveat on the finding, never a change to the ledger.

Truth by construction (a hand-written PyTorch trace: host-bound steps of Python calls of known period) and on the
real traces where it was found (SURVEY.md "Survey h37-survey37", "Left for the lead": SD 3.5's 134k Python spans in
one step); controls: the same steps with no Python event, and a ``with_stack`` capture whose step is GPU-bound.
"""

from __future__ import annotations

import re

import pytest

from tests.support import kineto_doc
from tests.support.paths import FIXTURES
from tests.support.run_report import run_report

WILD = FIXTURES / "wild"
HOST = {"ph": "X", "pid": 1, "tid": 1}
#: the words' own marks: the count said and how to measure without the tracing
SAID = re.compile(r"The capture recorded every Python call \(torch\.profiler's with_stack=True\): ([\d,]+) Python calls "
                  r"(?:per step|in the (?:\w+ )?\w+)(?: on average[^,;]*)?, ([\d,]+) calls? of them while the GPU ran "
                  r"nothing(?:; at ([\d.]+) us a call .*? those cost up to ([\d.]+) (us|ms) of the GPU's ([\d.]+) (us|ms) "
                  r"idle .*?, about ([\d.]+) (us|ms) of this)?")
#: the words where the calls are counted inside the finding's own host time (the input wait's)
INSIDE = re.compile(r"with_stack=True\): ([\d,]+) Python calls (?:per step|in the (?:\w+ )?\w+) inside this wait while "
                    r"the GPU ran nothing; at ([\d.]+) us a call .*? those cost up to ([\d.]+) (us|ms) of this")
CONFIRM = "profile again without with_stack=True"


def _steps(python: bool, n: int = 6, quick: int = 300, slow: int = 10) -> list[dict]:
    """``n`` ProfilerSteps of 1000 us: the host runs Python from 20 us -- one outer call holding ``quick`` leaf calls
    back to back every 0.8 us (0.5 us each) then ``slow`` leaf calls of 50 us -- then launches one 100 us kernel at
    850 us: the GPU idles ~90% of each step while the host runs its own code.  ``python`` False: the same host
    time with no Python event recorded."""
    ev, corr, t = [], 0, 100.0
    for s in range(n):
        ev.append({**HOST, "cat": "user_annotation", "name": f"ProfilerStep#{s + 1}", "ts": t, "dur": 1000})
        if python:
            ev.append({**HOST, "cat": "python_function", "name": "train.py(40): step", "ts": t + 10, "dur": 830})
            at = t + 20
            for i in range(quick):
                ev.append({**HOST, "cat": "python_function", "name": "model.py(12): weight",
                           "ts": round(at + 0.8 * i, 3), "dur": 0.5})
            at += 0.8 * quick + 1
            for i in range(slow):
                ev.append({**HOST, "cat": "python_function", "name": "model.py(30): prepare",
                           "ts": round(at + 52 * i, 3), "dur": 50})
        corr += 1
        ev += kineto_doc.mm_launch(t + 850, corr, 100)
        t += 1000
    return ev


def _host_words(rep: dict) -> list[str]:
    """The summaries of the findings resting on the host's time."""
    return [f["summary"] for f in rep["findings"] if f["rule"] in ("unexplained_idle", "launch_bound", "step_gaps")]


def _traced(rep: dict) -> tuple[dict, re.Match]:
    """The one finding resting on the host's time that says the tracing, and its words."""
    (f,) = [f for f in rep["findings"] if f["rule"] in ("unexplained_idle", "launch_bound", "step_gaps")
            and SAID.search(f["summary"])]
    return f, SAID.search(f["summary"])


def test_host_bound_steps_of_traced_python_say_the_calls_and_their_bounded_cost(tmp_path):
    """The GPU idles 880 us of each step while the host runs Python (a gap between the steps the kernels bound):
    311 calls a step, the cheapest repeating every 0.8 us -- 248.8 us of the host's 880 us."""
    rep = kineto_doc.session_report(tmp_path, _steps(python=True))
    f, m = _traced(rep)  # main: no finding says the tracing (ValueError)
    assert m.group(1) == "311" and m.group(2) == "311"  # 1 outer + 300 quick + 10 slow calls a step, all in GPU idle
    assert float(m.group(3)) == pytest.approx(0.8)  # the quick calls' period: the cheapest back-to-back pairs
    cost, idle, part = (_us(m.group(k), m.group(k + 1)) for k in (4, 6, 8))
    assert cost == pytest.approx(311 * 0.8, abs=1.0)  # the idle calls x the least a call takes
    host = f["saving"]["ms_per_step"] * 1000.0
    assert part == pytest.approx(cost * min(1.0, host / idle), abs=1.0) and part < host  # its share of the idle
    assert CONFIRM in f["summary"]


def _us(value: str, unit: str) -> float:
    return float(value) * (1000.0 if unit == "ms" else 1.0)


def test_control_the_same_steps_without_python_events_say_nothing_of_tracing(tmp_path):
    rep = kineto_doc.session_report(tmp_path, _steps(python=False))
    assert _host_words(rep)  # the host's time is still a finding
    assert not any("Python call" in s or CONFIRM in s for s in _host_words(rep))


def test_the_cost_never_exceeds_the_findings_own_host_time(tmp_path):
    """Calls so many that calls x period passes the finding's host time: the cost is said as at most that time."""
    from tb_gpu_advisor.metrics.types import PythonTracing
    from tb_gpu_advisor.rules.base import Ctx, traced_python

    m = kineto_doc.host_metrics_of(tmp_path, _steps(python=True))
    m.capture.python_tracing = PythonTracing(calls_per_step=1e6, idle_calls_per_step=1e6, call_us=0.8, pairs=100)
    said = SAID.search(traced_python(Ctx(m), 0.88))
    assert said is not None and (said.group(8), said.group(9)) == ("880", "us")


def test_whole_microsecond_timestamps_say_the_count_without_a_cost(tmp_path):
    """A file whose clock keeps whole microseconds cannot show a call of a fraction of one: the count is said, no
    cost is read from it."""
    ev = [dict(e, ts=float(round(e["ts"])), dur=float(max(1, round(e["dur"])))) for e in _steps(python=True, quick=0)]
    f, m = _traced(kineto_doc.session_report(tmp_path, ev))
    assert m.group(1) == "11" and m.group(3) is None
    assert "cannot resolve" in f["summary"]


def _summary(run: str, rule: str) -> str:
    (f,) = [f for h in run_report(WILD, run).hosts for f in h.findings if f.rule == rule]
    return f.summary


def test_sd35_host_bound_denoising_steps_under_with_stack_name_its_cost():
    """Read by hand: 134,628 `python_function` events in the file, 134,151 inside `ProfilerStep#3`, 80,204 of them
    starting while the GPU runs nothing; the cheapest back-to-back leaf calls repeat every 0.34 us (10th percentile
    of 50,758 pairs): 27.3 ms of the GPU's 483.1 ms idle, its share of the host-bound time (5.7%) -- a part,
    not the cause: the step stays host-bound."""
    s = _summary("xdit_sd35_mi300x_denoise", "unexplained_idle")
    m = SAID.search(s)
    assert m is not None, s  # main: "... the step is host-bound." and nothing of the tracing
    assert (m.group(1), m.group(2), m.group(3)) == ("134,151", "80,204", "0.34")
    assert (m.group(4), m.group(5), m.group(9)) == ("27.3", "ms", "ms")
    # the finding's share of the tracing's idle is its share of the GPU's idle (its own host time, read from the
    # same sentence: the input wait's words moved part of the lead into this finding's time)
    own = float(re.search(r"about [\d.]+ ms of this ([\d.]+) ms", s).group(1))
    assert float(m.group(8)) == pytest.approx(27.3 * own / float(m.group(6)), abs=0.1)
    assert CONFIRM in s


@pytest.mark.parametrize("run, rule, calls", [("nsfw_vit_h100", "launch_bound", "2,008"),
                                              ("gpt2_b200_clock_skew", "unexplained_idle", "1,875")])
def test_real_with_stack_captures_bound_by_the_host_say_the_tracing(run, rule, calls):
    """nsfw_vit_h100: launch-bound ViT forward, 2,008 Python calls in its one step (1,677 in GPU idle) at 0.28 us;
    gpt2_b200_clock_skew: host-bound AdamW step, 1,875 calls (1,821 in GPU idle) at 0.16 us."""
    m = SAID.search(_summary(run, rule))
    assert m is not None and m.group(1) == calls  # main: no word of the tracing


def test_control_a_with_stack_capture_whose_step_is_gpu_bound_says_nothing_of_tracing():
    """xdit_flux_mi300x_denoise records 200,846 Python calls in its step, yet its denoising replays HIP graphs and
    no finding rests on the host's time: no word of the tracing."""
    rep = run_report(WILD, "xdit_flux_mi300x_denoise")
    texts = [f.summary for h in rep.hosts for f in h.findings] + [f.summary for f in rep.findings]
    assert texts and not any("Python call" in t for t in texts)


def test_an_input_wait_held_by_traced_python_frames_says_the_tracing():
    """timesformer_h100_video: the input wait (215.4 ms) is held by the program's own ``preprocess`` frames --
    ``python_function`` events, the tracer's own records.  Read by hand: 34,734 of them start in the kept
    ``ProfilerStep#6`` before its first op (215.4 ms), all while the GPU runs nothing; the cheapest back-to-back leaf
    calls repeat every 0.24 us.  The input finding rests on the host's time as the host-bound one does, and says so
    (review18) -- counting the calls inside the wait itself (h37-inputjax; was 35,109 of the whole step's idle, spread
    by the wait's share of it: 7.97 ms): the lead's frames that are no input (the profiler's ``step``, ``torch.cuda``)
    hold a few of them, which are not the wait's."""
    rep = run_report(WILD, "timesformer_h100_video")
    (f,) = [f for h in rep.hosts for f in h.findings if f.rule == "input_bound"]
    assert "held by the program's own input preparation" in f.summary  # the premise: frames hold the wait
    m = INSIDE.search(f.summary)
    assert m is not None, f.summary  # main: the step's idle calls spread by the wait's share of the idle
    calls, period = int(m.group(1).replace(",", "")), float(m.group(2))
    assert 34_600 <= calls <= 34_734 and period == 0.24
    part, wait_us = _us(m.group(3), m.group(4)), f.saving.ms_per_step * 1000.0
    assert part == pytest.approx(calls * period, rel=0.01) and part < wait_us
    # control: a caveat, not a change to the ledger -- the saving is still the whole measured wait; and the GPU-time
    # finding beside it (attention computed op by op) says nothing of the host's tracing
    assert f.saving.ms_per_step == pytest.approx(f.metric.detail["input_wait_ms"], abs=1e-3)
    (a,) = [g for h in rep.hosts for g in h.findings if g.rule == "unfused_attention"]
    assert "Python call" not in a.summary


def test_an_in_process_loaders_wait_says_the_tracing_inside_it():
    """loader_pass_rtx5070ti: the wait is the DataLoader's own ``__next__`` (9.43 ms), and the loader has no workers
    (``_SingleProcessDataLoaderIter``): its Python runs in the traced process.  Read by hand: 3,283 ``python_function``
    events start inside that ``__next__``, none while the GPU runs; 0.20 us a call.  Main said nothing of the tracing
    (the caveat was said only where frames the report names hold the wait)."""
    (f,) = [f for h in run_report(WILD, "loader_pass_rtx5070ti").hosts for f in h.findings if f.rule == "input_bound"]
    assert "the input pipeline's own time" in f.summary
    m = INSIDE.search(f.summary)
    assert m is not None, f.summary
    assert (m.group(1), m.group(2)) == ("3,283", "0.20")
    assert _us(m.group(3), m.group(4)) == pytest.approx(3283 * 0.20, abs=1.0)
    assert f.saving.ms_per_step == pytest.approx(f.metric.detail["input_wait_ms"], abs=1e-3)  # a caveat only


def test_control_a_parallel_loaders_wait_without_traced_python_keeps_its_words():
    """resnet_rtx2080ti_slow_workers: the DataLoader's workers make the batches, and no Python was traced: no word of
    the tracing."""
    (f,) = [f for h in run_report(WILD, "resnet_rtx2080ti_slow_workers").hosts for f in h.findings
            if f.rule == "input_bound"]
    assert "the input pipeline's own time" in f.summary and "Python call" not in f.summary


# ---------------------------------------------------------------- a capped saving names only a fix the report gives

def _assumption(run: str, rule: str) -> str:
    (f,) = {f.saving.assumption for h in run_report(WILD, run).hosts for f in h.findings if f.rule == rule
            and f.saving is not None and "lengthens that idle" in f.saving.assumption} or {""}
    return f


def test_a_capped_saving_without_a_host_bound_finding_says_why_it_is_capped():
    """d2d_v100 caps mixed_precision_off's saving by 1.45 ms the host paces, yet no finding of its report fixes the
    host's pacing: the saving says why it stops there, never 'once the host-bound fix lands'.  (143 us before
    h37-idle63: kernels whose gain ends in a host-late idle before the next sync count no longer; 1.48 ms in
    h37-idle63, 1.45 ms since h37-idle64: 1,928 of its 8,954 drains fall in host time no event records that lasts
    past a wake-up, where a wait may hide; at 6,230 the host is inside a recorded op or call.)"""
    a = _assumption("d2d_v100", "mixed_precision_off")
    assert ("(1.45 ms left out: the host, not these kernels, sets the pace there, and no finding of this report gives "
            "back that idle)") in a
    assert "host-bound fix" not in a and "{host_fix}" not in a  # main: "(143 us more once the host-bound fix lands)"


def test_a_capped_saving_beside_an_input_wait_names_that_fix():
    """loader_pass_rtx5070ti: the GPU waits for the input (critical input_bound), no host-bound finding: the cap's
    62 us come back once the input's fix lands, and the saving says that fix.  (51 us before h37-kernelfam4: its
    mangled cuDNN kernels read fp32 now, not unknown, and join the saving's pool; 54 us before h37-idle63: a GEMM
    whose gain ends in a host-late idle before the next sync is not critical.)"""
    a = _assumption("loader_pass_rtx5070ti", "mixed_precision_off")
    (f,) = [f for f in run_report(WILD, "loader_pass_rtx5070ti").findings if f.rule == "input_bound"]
    assert f'(62 us more once the fix of "{f.title}" lands)' in a, a  # main: "more once the host-bound fix lands"


def test_control_a_capped_saving_beside_a_host_bound_finding_keeps_its_words():
    a = _assumption("gpt2_b200_clock_skew", "mixed_precision_off")
    assert re.search(r"\(\d+ us more once the host-bound fix lands\)", a), a


def test_the_placeholder_is_the_only_difference_between_the_two_wordings():
    from tb_gpu_advisor.rules.base import CAPPED, HOST_FIX, HOST_FIX_WORDS

    # the template carries the placeholder, filled once every finding is known; both fills keep the cut first
    assert HOST_FIX in CAPPED.format(cap="1 ms", cut="2 us")
    assert all(w.startswith(" ") for w in HOST_FIX_WORDS.values())
