"""A tracing-off capture's fix records a window our own reading can judge; its headline says why its cards are
n/a; its recorded command is shown without a secret (issue #37 deliverable 1; h37-tracingoff3).

Wrong assumptions on main (2c175149):
1. *A report per NVTX range is a window on the steady state*: ``--capture-range-end=repeat-shutdown:N`` writes one
   report per ``benchmark_iteration``, each holding ONE step, which capture_quality calls "Too few steps".  One
   window over enough steady iterations is asked for instead: by ``--delay``/``--duration`` read off the capture's
   clock where it began at the program's launch, else by cudaProfilerStart/Stop around them.
2. *A host with no framework seen has none*: where the GPU side went unrecorded (``job.gpu_unrecorded``), the n/a
   cards said "no ML framework in the capture"; nothing could have shown one (h37-review29: nor its framework name).
3. *A recorded command can be shown back as it is*: a ``--token=...`` typed on it would be printed in the fix.
"""

from __future__ import annotations

import io
import math
import os
import sqlite3
from contextlib import redirect_stderr, redirect_stdout

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.formats.nsys import reader
from tests.support.cli_report import first_report
from tests.support.paths import REPO

REAL = os.path.join(REPO, "tests", "fixtures", "wild", "tracing_off_nvtx_a10_train", "nvtx_result.sqlite")
NEEDED = math.ceil(T("capture.min_steps")) + 2  # the window's whole iterations: min_steps and the two edges


def _fix(rep: dict) -> dict:
    (f,) = [f for f in rep["findings"] if f["rule"] == "capture_quality"]
    return f["actions"][0]


def _rendered(path: str, fmt: str) -> str:
    """``report PATH --format fmt`` run in this process."""
    from tb_gpu_advisor.cli import main as cli

    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        cli.main(["report", path, "--format", fmt, "--cache-dir", "off"])
    return out.getvalue()


def _too_few(path: str) -> bool:
    return any(f["title"].startswith("Too few steps") for f in first_report(path)["findings"])


@pytest.mark.parametrize("iterations", [1, NEEDED - 1, NEEDED])
def test_the_window_asked_for_is_one_the_capture_check_accepts(tmp_path, iterations):
    """Truth by construction (``write_retraced_loop``: what the fix asks for, recorded with CUDA on): a report per
    iteration (main's ``repeat-shutdown``) holds one step and reads "Too few steps"; so does a window one short of
    the count the fix asks for (its first and last are dropped); the count asked for does not."""
    p = str(tmp_path / "retraced.sqlite")
    nx.write_retraced_loop(p, iterations=iterations)
    assert _too_few(p) == (iterations < NEEDED)


def test_the_real_export_is_told_one_window_by_its_own_clock():
    """By hand (SQL): nsys launched the program (``HOW_TO_ATTACH`` LaunchAnother), the window opened at once
    (``START_TRIGGER`` Immediate, ``START_DELAY_MS`` 0), and the export's times count from the session's start
    (``NVTX_EVENTS.start`` 6.4e9 ns against ``ANALYSIS_DETAILS.startTime`` 1.4e16): the first steady
    ``benchmark_iteration`` (the second; the first ran 780.3 ms, over 1.5x the median) began 7.20 s after the launch
    -> ``--delay=8``; (min_steps + 3) medians -> ``--duration=2``; the run went on to 10.14 s, past 10 s."""
    con = sqlite3.connect(REAL)
    meta = dict(con.execute("SELECT name, value FROM META_DATA_CAPTURE").fetchall())
    rows = con.execute("SELECT start, end FROM NVTX_EVENTS WHERE text = 'benchmark_iteration' ORDER BY start").fetchall()
    con.close()
    assert (meta["PROCESS_0:HOW_TO_ATTACH"], meta["START_TRIGGER"], meta["START_DELAY_MS"]) == (
        "LaunchAnother", "Immediate", "0")
    lengths = sorted((e - s) / 1e6 for s, e in rows)
    median = lengths[len(lengths) // 2]
    delay, duration = math.ceil(rows[1][0] / 1e9), math.ceil((NEEDED + 1) * median / 1000)
    assert (delay, duration) == (8, 2) and delay + duration <= rows[-1][1] / 1e9
    rep = first_report(REAL)
    fix = _fix(rep)
    first = fix["snippet"].splitlines()[0]
    assert first.startswith(f"nsys profile -t cuda,nvtx --delay={delay} --duration={duration} "
                            "--cuda-flush-interval=100 -o run python benchmark.py   #"), first
    assert f"{NEEDED} `benchmark_iteration` ranges or more in one report" in fix["text"], fix["text"]
    assert "cudaProfilerStart() before `benchmark_iteration` 2, cudaProfilerStop() after `benchmark_iteration` " \
           f"{1 + NEEDED}" in fix["snippet"]
    assert "repeat-shutdown" not in fix["snippet"]


@pytest.mark.parametrize("warmup", [0, 2])
def test_generated_delay_and_duration_are_read_off_the_launch(tmp_path, warmup):
    """Truth by construction: the loop begins 3 s after the launch, the first steady iteration at ``steady_ms``."""
    p = str(tmp_path / "loop.sqlite")
    truth = nx.write_tracing_off_loop(p, iterations=40, warmup=warmup, startup_ms=3000.0)
    delay = math.ceil(truth["steady_ms"] / 1000)
    duration = math.ceil((NEEDED + 1) * truth["step_ms"] / 1000)
    first = _fix(first_report(p))["snippet"].splitlines()[0]
    assert first.startswith(f"nsys profile -t cuda,nvtx --delay={delay} --duration={duration} "), first


def test_generated_capture_not_begun_at_launch_gets_no_delay(tmp_path):
    """The same loop, not launched by nsys (no ``HOW_TO_ATTACH`` LaunchAnother): when the capture began against the
    launch is unknown, so no delay is computed; the window is cudaProfilerStart/Stop around the iterations."""
    p = str(tmp_path / "attached.sqlite")
    truth = nx.write_tracing_off_loop(p, iterations=40, warmup=2, launched=False)
    fix = _fix(first_report(p))
    assert "--delay" not in fix["snippet"], fix["snippet"]
    assert fix["snippet"].startswith(f"nsys profile -t cuda,nvtx --capture-range=cudaProfilerApi "
                                     f"--capture-range-end=stop -o run {truth['program']}   # cudaProfilerStart() "
                                     f"before `{truth['iteration']}` 3, cudaProfilerStop() after "
                                     f"`{truth['iteration']}` {2 + NEEDED}"), fix["snippet"]
    assert "does not show when it began" in fix["text"], fix["text"]


def test_generated_run_too_short_for_the_window_gets_no_delay(tmp_path):
    """10 iterations of 120 ms after 2 of 600 ms (the generator's default): the run ends 2.1 s after the launch,
    before a window from 2 s, 1 s long, would -- so the range route, saying why."""
    p = str(tmp_path / "short.sqlite")
    truth = nx.write_tracing_off_loop(p)
    assert math.ceil(truth["steady_ms"] / 1000) + math.ceil((NEEDED + 1) * truth["step_ms"] / 1000) > \
        truth["end_ms"] / 1000
    fix = _fix(first_report(p))
    assert "--delay" not in fix["snippet"] and "ends before such a window" in fix["text"], fix["text"]


def test_na_cards_say_the_gpu_side_went_unrecorded_not_no_framework():
    """The real export: every n/a card's reason is the unrecorded GPU side, in JSON, text and markdown."""
    rep = first_report(REAL)
    host = rep["hosts"][0]
    assert host["job"]["gpu_unrecorded"] is True
    cards = host["headline"] if isinstance(host.get("headline"), list) else host["metrics"]
    na = [c for c in cards if c.get("display") == "n/a"]
    assert na and all("CUDA tracing was off" in c["detail"]["not_available"] for c in na), na
    for text in (_rendered(REAL, "text"), _rendered(REAL, "markdown"), str(cards)):
        assert "no ML framework" not in text and "CUDA tracing was off, so no CUDA call" in text


def test_secrets_on_the_recorded_command_are_masked(tmp_path):
    """A generated export whose command carries a token, an API key (its value the next word) and a secret
    variable: the reader keeps the command with those values masked; the other arguments as typed."""
    p = str(tmp_path / "secret.sqlite")
    nx.write_tracing_off_loop(p, command=("python", "train.py", "--token=s3cr3t", "--api-key", "k3y",
                                          "HF_TOKEN=abc123", "--lr=0.1", "--key-file", "cfg.json"), iterations=40)
    command = reader.read_trace(p).producer["program_command"]
    assert command == ("python train.py --token=*** --api-key *** HF_TOKEN=*** --lr=0.1 --key-file cfg.json")
    snippet = _fix(first_report(p))["snippet"]
    assert not any(s in snippet for s in ("s3cr3t", "k3y ", "abc123")), snippet


def test_the_law_reads_the_unrecorded_reason():
    """``gpu-unrecorded-reason`` holds on the real export and finds main's reason where it is put back on a card."""
    from tb_gpu_advisor.model.schema import Report
    from tests.support.properties import unrecorded_reason_problems

    (host,) = Report.from_dict(first_report(REAL)).hosts
    assert unrecorded_reason_problems("h0", host) == []
    card = next(c for c in host.headline if c.id == "host_op_share")
    card.detail = {"not_applicable": "no ML framework in the capture: a GPU program's own code has no op placement"}
    assert unrecorded_reason_problems("h0", host) == [
        f"gpu-unrecorded-reason: h0: card host_op_share says {card.detail['not_applicable']!r}"]


def test_the_framework_name_says_the_gpu_side_went_unrecorded():
    """h37-review29: the real export's ``capture.framework_name`` (the tab's "capture of ...") is not the native
    program's "a GPU program with no ML framework" -- no op or kernel could name one -- and the law reads it there."""
    from tb_gpu_advisor.model.schema import Report
    from tb_gpu_advisor.report.build import FRAMEWORK_NOT_RECORDED
    from tests.support.properties import unrecorded_reason_problems

    (host,) = Report.from_dict(first_report(REAL)).hosts
    assert host.capture["framework_name"] == FRAMEWORK_NOT_RECORDED and "CUDA tracing was off" in FRAMEWORK_NOT_RECORDED
    assert unrecorded_reason_problems("h0", host) == []
    host.capture["framework_name"] = "a GPU program with no ML framework"
    assert unrecorded_reason_problems("h0", host) == [
        "gpu-unrecorded-reason: h0: its framework is 'a GPU program with no ML framework'"]


def test_a_generated_tracing_off_loop_names_no_framework(tmp_path):
    """A generated ``-t nvtx`` export (truth by construction: no CUDA record, NVTX iterations) names no framework."""
    p = str(tmp_path / "off.sqlite")
    nx.write_tracing_off_loop(p, iterations=40)
    host = first_report(p)["hosts"][0]
    assert host["job"].get("gpu_unrecorded") is True
    assert "no ML framework" not in host["capture"]["framework_name"], host["capture"]
