"""Stat pruning must not change any report: the XPlane adapter reads only its USED_STATS."""

import dataclasses
import json
import os
from pathlib import Path

import pytest

from tb_gpu_advisor.discover.logdir import HostFile
from tb_gpu_advisor.formats.xplane.adapter import USED_STATS
from tb_gpu_advisor.formats.xplane.reader import read_timeline
from tb_gpu_advisor.runtime import pipeline
from tests.support.paths import REPO
from tests.support.profile_files import V100_CAPTURE, every_capture

ROOT = REPO
V100 = Path(V100_CAPTURE).resolve()


def _report(path: Path, monkeypatch, keep) -> str:
    """analyze_host's report as JSON, with the reader forced to ``keep`` (None: every stat)."""
    import tb_gpu_advisor.formats.xplane.adapter as adapter

    monkeypatch.setattr(adapter, "read_timeline", lambda p, **_: read_timeline(p, keep_stats=keep))
    report = pipeline.analyze_host(HostFile("h", str(path), os.path.getsize(path), 0))
    return json.dumps(dataclasses.asdict(report), sort_keys=True, default=lambda o: o.item() if hasattr(o, "item") else str(o))


def test_reports_identical_with_and_without_pruning(tmp_path, monkeypatch):
    files = every_capture(tmp_path)
    assert len(files) >= 20
    for path in files:
        assert _report(path, monkeypatch, USED_STATS) == _report(path, monkeypatch, None), path


def test_pruned_timeline_keeps_only_used_stats_but_all_names():
    if not V100.exists():
        pytest.skip("real capture not found")
    full = read_timeline(str(V100))
    pruned = read_timeline(str(V100), keep_stats=frozenset({"correlation_id"}))
    gpu, gpu_p = full.plane("/device:GPU:4"), pruned.plane("/device:GPU:4")
    assert gpu.stat_names == gpu_p.stat_names  # presence checks (stat_key) are unaffected
    compute, compute_p = gpu.line("Stream #134(Compute)"), gpu_p.line("Stream #134(Compute)")
    assert (compute_p.int_stat("correlation_id") == compute.int_stat("correlation_id")).all()
    assert not compute_p.has_stat("kernel_details").any() and compute.has_stat("kernel_details").all()
    assert sum(len(ln.stats) for ln in gpu_p.lines) < sum(len(ln.stats) for ln in gpu.lines)
