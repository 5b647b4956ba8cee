"""Stat pruning must not change any report: the XPlane adapter reads only its USED_STATS."""

from pathlib import Path

import pytest

from tb_gpu_advisor.formats.xplane.reader import read_timeline
from tests.support.paths import REPO
from tests.support.profile_files import V100_CAPTURE, every_capture, host_report_json, users_host_report_json

ROOT = REPO
V100 = Path(V100_CAPTURE).resolve()


def test_reports_identical_with_and_without_pruning(tmp_path):
    """Each capture's host report as users get it (``USED_STATS`` kept, read as the adapter reads: computed once per
    test run, ``profile_files.users_host_report_json``, which the release test compares with too) equals the one read
    with every stat."""
    files = every_capture(tmp_path)
    assert len(files) >= 20
    for path in files:
        assert users_host_report_json(path) == host_report_json(path, None, release=True), path


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
