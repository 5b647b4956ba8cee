"""A healthy memory snapshot of unknown capacity says what its peak holds and that the capacity is unknown, with how
to record it -- as a note, never a warning (issue #37 class 5, deliverable 5; session 71 snap71, snap70's *Left* 1).

Base ea5a2537 read such a snapshot "No memory check fired ..." with no finding at all: not its peak, not what held
it, not that the checks measuring a peak against the GPU had no capacity to measure against.  Now ``capture_quality``
adds an info on each snapshot GPU with a history, no capacity and no memory finding of its own: the peak, when, its
parts as the frames (or the allocation pattern) book them, the reserve beyond it, and ``RECORD_CAPACITY``
(``torch.cuda.mem_get_info()`` beside the dump, or ``profile_memory=True``); the verdict says the peak was judged
against no capacity.

Truth: ``synthetic.memsnapshot.training_iterations`` (by construction: 768 MiB of weights and Adam's moments held
across iterations, a 1,120 MiB peak) and the kept ``wild/snapshot_inference_gpt`` (Wedsonlin's CS336 GPT-2 medium
forward under ``inference_mode``, MIT: ~1.59 GiB of weights, ~34 MiB of activations, 1.64 GiB reserved; PROVENANCE.md).
Accounting: the parts named sum to the peak named, which is no more than the reserve named."""

from __future__ import annotations

import re
from pathlib import Path

from synthetic import memsnapshot as ms
from tests.support.cli_report import cli_report
from tests.support.paths import FIXTURES

TITLE = "The memory snapshot's peak was judged against no capacity"
UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def _bytes(figure: str) -> float:
    value, unit = figure.split()
    return float(value) * UNITS[unit]


def _notes(report: dict) -> list[dict]:
    return [f for f in report["hosts"][0]["findings"] if f["title"] == TITLE]


def _accounted(summary: str) -> tuple[float, list[float], float]:
    """(the peak, its parts, the reserve) as the note states them."""
    peak = re.search(r"peak is ([0-9.]+ [KMG]?i?B) allocated", summary).group(1)
    parts = summary.split(": ", 1)[1].split("; ", 1)[0]
    sizes = re.findall(r"(?:^|, )([0-9.]+ [KMG]?i?B) ", parts)
    reserved = re.search(r"; ([0-9.]+ [KMG]?i?B) reserved at most", summary).group(1)
    return _bytes(peak), [_bytes(s) for s in sizes], _bytes(reserved)


def _says_what_it_holds(report: dict) -> str:
    (note,) = _notes(report)
    assert note["severity"] == "info" and note["rule"] == "capture_quality"
    assert not [f for f in report["hosts"][0]["findings"] if f["severity"] in ("warning", "critical")]
    fix = " ".join(a["text"] + (a.get("code") or "") for a in note["actions"])
    assert "mem_get_info" in fix and "profile_memory=True" in fix
    assert "and no GPU capacity, so how near it the peak came was not judged" in report["verdict"]
    peak, parts, reserved = _accounted(note["summary"])
    assert len(parts) >= 2
    # rounded to three figures each: the parts add up to the peak within their rounding, never beyond the reserve
    assert abs(sum(parts) - peak) <= 0.01 * peak and peak <= reserved
    return note["summary"]


def test_a_healthy_training_snapshot_says_its_peak_and_its_unknown_capacity(tmp_path: Path):
    s = ms.training_iterations()
    text = _says_what_it_holds(cli_report(ms.write(str(tmp_path / "run" / "snapshot.pickle"), s.doc)))
    assert f"peak is {max(s.truth['peaks']) / (1 << 30):.2f} GiB allocated" in text
    assert f"{s.truth['held'] >> 20} MiB is held across steps (parameters, optimizer state" in text


def test_a_real_inference_snapshot_says_its_peak_and_its_unknown_capacity():
    text = _says_what_it_holds(cli_report(FIXTURES / "wild" / "snapshot_inference_gpt"))
    assert "peak is 1.62 GiB allocated" in text and "1.59 GiB is held across steps (parameters, caches)" in text
    assert "optimizer" not in text  # a forward under inference_mode holds no optimizer state


def test_a_snapshot_with_its_capacity_recorded_has_no_such_note(tmp_path: Path):
    """Control (passes on base): the capacity beside the dump lets the checks judge the peak."""
    path = ms.write(str(tmp_path / "run" / "snapshot.pickle"), ms.training_iterations().doc)
    ms.write_capacity(path, 80 << 30, 70 << 30)
    assert not _notes(cli_report(path))


def test_a_snapshot_a_memory_check_spoke_of_has_no_such_note(tmp_path: Path):
    """Control (passes on base): a forward keeping its graph is told of it, with the capacity words in that finding."""
    report = cli_report(ms.write(str(tmp_path / "run" / "snapshot.pickle"), ms.forward_only(grad=True).doc))
    assert [f for f in report["hosts"][0]["findings"] if f["rule"] == "activation_memory"]
    assert not _notes(report)
