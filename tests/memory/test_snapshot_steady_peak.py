"""A snapshot's memory peak as the steady iterations hold it, and a history without times placed by order.

h37-left32 drops a snapshot's first iteration as warm-up where it makes allocations no later one makes, but the memory
table kept the whole capture's peak: where that first iteration holds it (an autotuner's trial buffer, a first call's
workspace), "peak at" was a time outside every kept step and the rules judged what was live then.  The steady
iterations' peak is what a fix acts on; the warm-up's is said apart.  And a PyTorch 2.0 history records no times (the
reader places one entry a microsecond): its peak was said at a time on that invented clock.  Truth by construction
(``synthetic.memsnapshot.training_iterations``: each iteration's peak, the bytes held between iterations).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.common.fmt import gb
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.report.render import to_text
from tb_gpu_advisor.runtime.pipeline import analyze_host, analyze_session

#: A time as the report writes one ("147 us", "0.2 ms", "1.3 s").
_TIME = re.compile(r"\d[\d,.]*\s?(us|ms|s)\b")


def _host_file(tmp_path: Path, doc: dict) -> HostFile:
    path = ms.write(str(tmp_path / "snap.pickle"), doc)
    return HostFile("snap", path, Path(path).stat().st_size, 0, "snapshot")


def _report(tmp_path: Path, doc: dict):
    rep = analyze_host(_host_file(tmp_path, doc))
    assert rep.error is None, rep.error
    return rep


def _memory_section(tmp_path: Path) -> str:
    """The text report's memory table and the lines under it (the snapshot ``_report`` wrote)."""
    path = str(tmp_path / "snap.pickle")
    text = to_text(analyze_session(".", "s", [HostFile("snap", path, Path(path).stat().st_size, 0, "snapshot")]))
    return text.split("GPU memory (peak per GPU)", 1)[1].split("\n\n", 1)[0]


def test_a_warm_up_iterations_one_time_peak_is_said_apart_from_the_steady_peak(tmp_path: Path):
    """The first iteration makes and frees a 1 GiB trial buffer at its forward's top: the capture's peak (1,472 MiB),
    above every steady iteration's (1,120 MiB).  The table's peak is the steady one, inside a kept step, and what holds
    it is the steady state's (weights and Adam's moments held: the truth's ``held``); the warm-up's is said apart."""
    sc = ms.training_iterations(iterations=4, trial_mib=1024)
    peaks = sc.truth["peaks"]
    assert peaks[0] > max(peaks[1:])  # the construction: the warm-up holds the capture's peak
    rep = _report(tmp_path, sc.doc)
    assert rep.steps["dropped"][0]["step"] == 0 and rep.steps["dropped"][0]["reason"].startswith("warm-up"), rep.steps
    m = rep.gpus[0].memory
    assert m["peak_allocated_bytes"] == max(peaks[1:]), m["peak_allocated_bytes"]
    assert m["peak_step"] in [r[0] for r in m["step_peaks"]], (m["peak_step"], m["step_peaks"])
    assert m["breakdown"]["held"] == sc.truth["held"], m["breakdown"]
    assert (m["warmup_peak_bytes"], m["warmup_peak_step"]) == (peaks[0], 0), m
    assert m["peak_reserved_bytes"] >= m["warmup_peak_bytes"]  # no part exceeds its whole: the reserve held it
    section = _memory_section(tmp_path)
    assert (f"the first iteration's one-time allocations (step 0, dropped as warm-up) peak at {gb(peaks[0])}"
            in " ".join(section.split())), section


@pytest.mark.parametrize("trial_mib", [0, 512])
def test_a_warm_up_below_the_steady_peak_changes_nothing(tmp_path: Path, trial_mib: int):
    """Control: a first iteration whose one-time work stays below the steady peak (none, or a 512 MiB trial buffer:
    960 MiB against 1,120 MiB) -- the capture's peak is the steady iterations' and nothing is said apart."""
    sc = ms.training_iterations(iterations=4, trial_mib=trial_mib)
    rep = _report(tmp_path, sc.doc)
    m = rep.gpus[0].memory
    assert m["peak_allocated_bytes"] == max(sc.truth["peaks"]) and m.get("warmup_peak_bytes") is None, m
    assert "one-time allocations" not in _memory_section(tmp_path)


@pytest.mark.parametrize("kind", ["training", "inference"])
def test_a_history_without_times_places_its_peak_by_order_never_by_time(tmp_path: Path, kind: str):
    """A PyTorch 2.0 history (no ``time_us``): the peak is said by its iteration (the last of those holding the
    highest peak, by construction) and its event by order -- no time anywhere in the memory table, no ``peak_ms``."""
    sc = ms.training_iterations(iterations=4) if kind == "training" else ms.inference_loop(passes=4)
    for e in sc.doc["device_traces"][0]:
        e.pop("time_us")
    rep = _report(tmp_path, sc.doc)
    m = rep.gpus[0].memory
    peaks = sc.truth["peaks"]
    which = max(i for i, p in enumerate(peaks) if p == max(peaks)) + 1
    what = "training iteration" if kind == "training" else "forward pass"
    assert m["peak_ms"] is None and m["peak_allocated_bytes"] == max(peaks), m
    assert m["peak_place"].startswith(f"{what} {which} of {len(peaks)}, event "), m["peak_place"]
    section = _memory_section(tmp_path)
    assert m["peak_place"] in section and not _TIME.search(section), section


def test_a_forward_kept_in_a_history_without_times_is_freed_at_an_event_not_a_time(tmp_path: Path):
    """The forward-kept finding (no backward ran) said its peak and the blocks' release at times on the invented
    clock; without times both are places in the events' order."""
    sc = ms.forward_only(grad=True, passes=1)
    for e in sc.doc["device_traces"][0]:
        e.pop("time_us")
    rep = _report(tmp_path, sc.doc)
    f = next(f for f in rep.findings if f.rule == "activation_memory")
    assert "at its memory peak (at event " in f.summary and "freed together (at event " in f.summary, f.summary
    assert not _TIME.search(f.summary), f.summary


def test_an_oom_in_a_history_without_times_is_shown_at_no_moment(tmp_path: Path):
    """An OOM a PyTorch 2.0 snapshot recorded was shown "at 220 us" (a trace window on the invented clock): without
    times it has no moment -- the finding keeps its request and live blocks, no window, and ``at_ms`` is null."""
    sc = ms.oom_activations()
    for e in sc.doc["device_traces"][0]:
        e.pop("time_us")
    rep = _report(tmp_path, sc.doc)
    f = next(f for f in rep.findings if f.rule == "oom_snapshot")
    assert f.windows == [] and rep.gpus[0].memory["ooms"][0]["at_ms"] is None, (f.windows, rep.gpus[0].memory["ooms"])
    assert not _TIME.search(f.summary), f.summary
