"""The tab's OOM table names what holds each live block as the memory chart beside it does (``legend.MEMORY_LABELS``),
not by its category id.  Main (before h37-capfile33): ``view._memory`` wrote ``str(c)``, so the rows read
"activations", "held" where the chart's bars read "Activations (forward pass)", "Held across steps ..."."""

from __future__ import annotations

from pathlib import Path

from synthetic import memsnapshot as ms
from tb_gpu_advisor.metrics.types import MEMORY_CATEGORIES
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.report.legend import MEMORY_LABELS
from tb_gpu_advisor.report.view import _memory, memory_label


def test_every_memory_category_has_its_label():
    assert {c: memory_label(c) for c in MEMORY_CATEGORIES} == {c: MEMORY_LABELS[c] for c in MEMORY_CATEGORIES}
    assert memory_label("no such id") == "no such id" and memory_label(None) == "None"


def test_an_ooms_live_blocks_are_named_by_the_charts_labels(tmp_path: Path):
    """By construction: the OOM of ``oom_activations`` holds the forward's activations and the weights; each live row
    reads the chart's label of its category."""
    from tb_gpu_advisor.runtime.pipeline import analyze_host

    path = Path(ms.write(str(tmp_path / "oom.pickle"), ms.oom_activations().doc))
    rep = analyze_host(HostFile("oom", str(path), path.stat().st_size, 0, "snapshot"))
    m = rep.gpus[0].memory
    (oom,) = m["ooms"]
    cats = [c for _, c, _ in oom["live"]]
    assert "activations" in cats, cats
    shown = [row[1] for row in _memory(m, False)["ooms"][0]["live"]]
    assert shown == [MEMORY_LABELS[c] for c in cats]
    assert MEMORY_LABELS["activations"] in shown and "activations" not in shown


def test_the_peaks_holders_and_the_oom_name_a_category_alike(tmp_path: Path):
    """One memory panel, two tables (h37-review33): the peak's holders table ("What holds GPU 0's memory at its peak")
    sits above the OOM's live table.  Main (d836206e): capfile33 labelled the live rows only, and ``view._memory`` still
    wrote the holders' ``str(cat)`` -- the same blocks read "activations" in one table and "Activations (forward
    pass)" in the next.  By construction: ``oom_activations``'s peak and its OOM both hold the forward's activations."""
    from tb_gpu_advisor.runtime.pipeline import analyze_host

    path = Path(ms.write(str(tmp_path / "oom.pickle"), ms.oom_activations().doc))
    rep = analyze_host(HostFile("oom", str(path), path.stat().st_size, 0, "snapshot"))
    m = rep.gpus[0].memory
    ids = [row[1] for row in m["top"]]
    assert "activations" in ids, ids
    shown = _memory(m, False)
    holders = [row[1] for row in shown["top"]]
    assert holders == [memory_label(c) for c in ids]
    live = {row[1] for o in shown["ooms"] for row in o["live"]}
    assert MEMORY_LABELS["activations"] in set(holders) & live  # one name for the same blocks in both tables
    assert not set(ids) & set(holders)  # no category id left beside its label


def test_a_real_oom_panel_names_each_category_once():
    """``h200_memory/torch_oom_snapshot`` (H200, PyTorch's snapshot of a real OOM): main's tab read "activations",
    "held" in the peak's holders table and "Activations (forward pass)" in the OOM's live table right below it."""
    from tests.support.paths import FIXTURES
    from tests.support.run_report import run_report

    rep = run_report(FIXTURES / "h200_memory", "torch_oom_snapshot").to_dict()
    (m,) = [g["memory"] for h in rep["hosts"] for g in h["gpus"] if (g.get("memory") or {}).get("ooms")]
    ids = {row[1] for row in m["top"]} | {row[1] for o in m["ooms"] for row in o["live"]}
    assert "activations" in ids, ids
    shown = _memory(m, False)
    names = {row[1] for row in shown["top"]} | {row[1] for o in shown["ooms"] for row in o["live"]}
    assert names == {memory_label(c) for c in ids}, names
