"""A loop marked only by its phases -- ``record_function("forward")`` / ``"backward"`` / ``"optimizer"``, no
``ProfilerStep`` -- reads iterations that open at each forward (h37-probe48k *Left* 1/2, issue #37 class 2).

By construction (``tests.support.phase_spans.phase_spans_host``): the ``ddp_balanced`` / ``ddp_launch_skew``
jobs (4 ranks, one Kineto file each; in the skew each rank launches 400 us behind the one before), every
``ProfilerStep#k`` dropped and its window split into the user's phases.  Truth: the same capture with its
``ProfilerStep#k`` kept, whose steps each open at that step's forward (the ``forward`` span starts 0.5 us after the
``ProfilerStep``); the report's clock opens at the capture's first event, which the dropped annotations moved by at
most 13 us, hence the tolerance -- a phase is 0.8 ms (``backward``) to 2.4 ms (``optimizer``) away.

BASE (c8590826): the phase holding the most launches was the step span -- the ``backward`` (ranks together; one
rank: 108 us late, the forward's part), or, ranks 400 us apart, the ``optimizer``, whose instances on a skewed rank
held the others' launches by time: each step opened a phase late, 0.81 ms (balanced) and 2.36 ms (skew) after its
forward, per-step numbers right.  Now ``job.structure._opening_forwards`` reads such a phase as the iterations its
thread's forward spans open (``forward_iterations``), each rank's on its own thread (``steps.nvtx_ranges._own_ends``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from synthetic import torchtrace as tt
from tests.support.cli_report import ran_report
from tests.support.phase_spans import DDP_COMPUTE_MS, compute_rows, phase_spans_host

#: the report clock's shift by the dropped annotations, ms (see the module's docstring)
CLOCK_MS = 0.02


def _truth_starts(logdir: Path, scenario: str, ranks: int) -> dict[int, list[float]]:
    """GPU -> its kept steps' starts (ms) in the ``ProfilerStep``-marked capture of ``scenario`` (its first ``ranks``
    files)."""
    _write(logdir, scenario, ranks)
    code, report = ran_report(logdir)
    assert code in (0, 1)
    (host,) = report["hosts"]
    assert host["steps"]["source"] == "profiler_step"
    return _starts(host)


def _write(logdir: Path, scenario: str, ranks: int) -> list[str]:
    """``scenario``'s files, only the first ``ranks`` kept."""
    paths = tt.write_run(str(logdir), scenario)
    for p in paths[ranks:]:
        os.remove(p)
    return paths[:ranks]


def _starts(host: dict[str, Any]) -> dict[int, list[float]]:
    out: dict[int, list[float]] = {}
    for r in sorted(host["step_rows"], key=lambda r: r["step"]):
        if r["gpu"] is not None:
            out.setdefault(r["gpu"], []).append(r["start_ms"])
    return out


def _phase_host(logdir: Path, scenario: str, ranks: int, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """``phase_spans_host`` of ``scenario``'s first ``ranks`` files."""
    real = tt.write_run

    def first_ranks(folder: str, sc: str) -> list[str]:
        paths = real(folder, sc)
        for p in paths[ranks:]:
            os.remove(p)
        return paths[:ranks]

    monkeypatch.setattr(tt, "write_run", first_ranks)
    return phase_spans_host(logdir, scenario)


@pytest.mark.parametrize("ranks", [1, 4])
@pytest.mark.parametrize("scenario", ["ddp_balanced", "ddp_launch_skew"])
def test_each_step_opens_at_its_forward(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scenario: str,
                                        ranks: int) -> None:
    """Every kept step on every GPU starts where its ``ProfilerStep`` did (within the clock's shift).  BASE: 0.11 ms
    (1 rank), 0.81 ms (4 ranks together) and 2.36 ms (4 ranks 400 us apart, GPU 0) late."""
    truth = _truth_starts(tmp_path / "truth", scenario, ranks)
    host = _phase_host(tmp_path / "phases", scenario, ranks, monkeypatch)
    assert host["steps"]["source"] == "annotation_spans"
    got = _starts(host)
    assert sorted(got) == sorted(truth) == list(range(ranks))
    for g in truth:
        assert len(got[g]) == len(truth[g]) == 10, g
        assert max(abs(a - b) for a, b in zip(got[g], truth[g])) <= CLOCK_MS, (g, got[g][:3], truth[g][:3])


@pytest.mark.parametrize("scenario", ["ddp_balanced", "ddp_launch_skew"])
def test_the_iterations_keep_each_steps_numbers_and_say_what_they_are(tmp_path: Path, scenario: str) -> None:
    """4 ranks: 12 iterations found, 10 kept of the body's compute on every GPU, each rank's own; the note names the
    forward that opens them and the phase the spans were chosen by."""
    host = phase_spans_host(tmp_path, scenario)
    assert host["job"]["kind"] == "training"
    assert host["steps"]["found"] == 12
    note = host["steps"]["note"]
    assert "each from a `forward` host event through its" in note and "on 4 ranks' threads" in note
    for g in range(4):
        assert compute_rows(host, g) == [(k, round(DDP_COMPUTE_MS, 3)) for k in range(1, 11)], g


def test_a_phase_with_no_forward_reads_its_own_spans(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Control: the same job marking only its ``backward`` and ``optimizer`` phases (its ``forward`` spans dropped)
    reads the repeated phase's own spans, each rank's, as before: the program marks no opening of its iterations."""
    real = tt.write_doc

    def no_forward(path: str, doc: dict) -> None:
        doc["traceEvents"] = [e for e in doc["traceEvents"]
                              if not (e.get("cat") == "user_annotation" and e.get("name") == "forward")]
        real(path, doc)

    monkeypatch.setattr(tt, "write_doc", no_forward)
    host = phase_spans_host(tmp_path, "ddp_balanced")
    assert host["steps"]["source"] == "annotation_spans"
    assert "48 `backward` host events on 4 ranks' threads" in host["steps"]["note"]
