"""A synthetic memory snapshot written and analysed as a host (``runtime.pipeline.analyze_host``), for the tests of
the snapshot's findings: one home for the helpers the leak tests share (tests import support, never each other)."""

from __future__ import annotations

from pathlib import Path

from synthetic import memsnapshot as ms
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.kept_reports import is_kept, kept_host_report


def report(path: Path):  # noqa: ANN201 - the host's report
    """The host report of the snapshot at ``path``; it must read without error.  A kept snapshot's (the fixtures',
    ``../shared``'s) is its session's, analysed once per test run and shared (``kept_reports``); a test's own file
    is analysed here."""
    if is_kept(path):
        return kept_host_report(path)
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    return rep


def written(tmp_path: Path, sc: ms.Scenario, name: str = "snap.pickle") -> Path:
    """``sc``'s snapshot written as ``tmp_path/name``."""
    return Path(ms.write(str(tmp_path / name), sc.doc))


def leaks(rep) -> list:  # noqa: ANN001 - the host's report
    """The report's ``memory_leak`` findings."""
    return [f for f in rep.findings if f.rule == "memory_leak"]


def assert_leak_is_truth(f, truth: dict, iterations: int) -> None:  # noqa: ANN001 - the leak finding
    """The leak finding ``f`` states the generator's truth (``Scenario.truth["leak"]``): the bytes and blocks each
    iteration keeps, how many iterations, the bytes held at the end and at the peak (its saving), and the site."""
    d = f.metric.detail
    assert d["per_iteration_bytes"] == truth["bytes_per_iteration"]
    assert d["blocks_per_iteration"] == truth["blocks_per_iteration"]
    assert d["iterations"] == iterations
    assert d["leak_end_bytes"] == truth["bytes_at_end"]
    assert f.saving_bytes == truth["bytes_at_peak"]
    assert any(site.startswith(truth["site"]) for site in d["sites"]), d["sites"]


def python_frames_leak(tmp_path: Path, kw: dict) -> tuple[int, int]:
    """(iterations, bytes held at the end) of the one leak read in ``ms.training_iterations(**kw)`` recorded with
    Python's frames: the stackless leak tests' control, the same loop with the line that names its leak."""
    sc = ms.training_iterations(**kw)
    (f,) = leaks(report(written(tmp_path, ms.Scenario(ms.as_recorded(sc.doc, stacks="python"), sc.truth))))
    d = f.metric.detail
    return d["iterations"], d["leak_end_bytes"]


def stackless_leaks_without_leak(tmp_path: Path, kw: dict) -> list:
    """The leak findings of ``ms.training_iterations(**kw)`` with its leak taken out, recorded stackless
    (``context=None``): the stackless leak tests' control, which must find none."""
    sc = ms.training_iterations(**{**kw, "leak": ""})
    return leaks(report(written(tmp_path, ms.Scenario(ms.as_recorded(sc.doc, context=None), sc.truth))))


def memory_reading(path: str) -> tuple:
    """The one GPU's memory events a snapshot file reads as (event count, deltas, phases): two files of one snapshot
    saved two ways (a pickle, ``torch.save``, a suffixless name) read alike where these are equal."""
    from tb_gpu_advisor.formats.snapshot import reader

    t = reader.read_trace(path)
    (me,) = t.memory.values()
    return t.num_events, me.delta.tolist(), me.phase.tolist()
