"""Releasing the timeline's event columns (``analyze_host``'s memory saving) must not change any report.

Why: ``formats.xplane.adapter.to_trace(release=True)`` drops each activity line's columns once the trace's
event tables hold them (docs/benchmarks.md, "Memory by stage"); an adapter step that still read a released
column, or a stat read after the release, would change a report only on the path users run.  So every corpus capture
is analysed both ways and the reports compared whole.
"""

from pathlib import Path

import numpy as np
import pytest

from synthetic.builder import SpaceBuilder
from tb_gpu_advisor.formats.xplane.adapter import USED_STATS, to_trace
from tb_gpu_advisor.formats.xplane.reader import parse_timeline
from tests.support.paths import REPO
from tests.support.profile_files import V100_CAPTURE, every_capture, host_report_json, users_host_report_json

ROOT = REPO
V100 = Path(V100_CAPTURE).resolve()


def test_reports_identical_with_and_without_release(tmp_path):
    """The released report is the one users get (computed once per test run, ``profile_files.users_host_report_json``,
    which the stat-pruning test compares with too); the kept one reads the same stats without the release."""
    files = every_capture(tmp_path)
    assert len(files) >= 20
    for path in files:
        released = users_host_report_json(path)
        kept = host_report_json(path, USED_STATS, release=False)
        assert released == kept, path


def _line_with_memory_stats():
    """A host line with allocator events and a correlation id."""
    space = SpaceBuilder()
    line = space.plane("/host:CPU").line("allocator", 1)
    line.add("MemoryAllocation", 10_000, 500, peak_bytes_in_use=123, allocator_name="GPU_0_bfc", correlation_id=7)
    line.add("MemoryAllocation", 20_000, 700, peak_bytes_in_use=456, allocator_name="GPU_0_bfc")
    line.add("Other", 30_000, 100, correlation_id=8)
    return parse_timeline(space.encode())


def test_release_keeps_length_and_span():
    ln = _line_with_memory_stats().plane("/host:CPU").line("allocator")
    span = ln.span()
    ln.release_events()
    assert len(ln) == 3 and ln.span() == span
    assert ln.start_ps is None and ln.duration_ps is None and ln.name_id is None
    assert not ln.has_stat("correlation_id").any() and not ln.has_stat("peak_bytes_in_use").any()  # stats gone
    ln.release_events()  # a second release changes nothing
    assert len(ln) == 3 and ln.span() == span


def test_allocator_peak_read_before_the_release():
    """The allocator peak is read while the stats are still there: the released trace still reports it."""
    trace = to_trace(_line_with_memory_stats(), release=True)
    assert trace.allocator.peak_bytes == 456


def test_released_columns_fail_loudly():
    ln = _line_with_memory_stats().plane("/host:CPU").line("allocator")
    ln.release_events()
    with pytest.raises(TypeError):
        np.asarray(ln.end_ps)
