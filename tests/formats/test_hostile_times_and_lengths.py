"""Issue #39 items 5 and 6: one long event costs its length, and times no clock writes are damage.

Why: anyone who can write into a shared logdir can hand the tab a trace whose one event name is 60 MB, or whose
every ``ts`` is 1e308.  Before, the first cost the square of its length (the reader grew its buffer 4 MB at a time
and rescanned it all for a cut each time: a 240 MB name took 6.3 s of CPU where 60 MB took 0.57 s) and hundreds of
name patterns each scanned the whole name; the second read as "Healthy ... step 0 us" with an overflow warning.

Linearity is asserted by counting, never by timing: with the reader's blocks made small, the reads a long event needs
grow with the logarithm of its length (the buffer doubles), the memory it peaks at stays a few times its length, and a
run of whitespace between events is dropped as it is read.  The times are checked through ``formats.read`` (the one
door every format passes) and through the CLI, whose exit code is 2 for a damaged file.
"""

from __future__ import annotations

import io
import json
import math
import subprocess
import sys
import tracemalloc

import pytest

from synthetic import hostile_kineto as hk
from tb_gpu_advisor import formats
from tb_gpu_advisor.formats.kineto import parse
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.model.sanity import MAX_NAME_CHARS
from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.paths import REPO


class _CountingStream(io.BytesIO):
    """A file whose reads are counted (the reader's growth, without a clock)."""

    def __init__(self, data: bytes):
        super().__init__(data)
        self.reads = 0

    def read(self, n: int = -1) -> bytes:
        self.reads += 1
        return super().read(n)


@pytest.fixture
def small_blocks(monkeypatch):
    """The reader's 4 MB chunks and 1 MB reads scaled down 256x, so a 2 MB event is 128 chunks long."""
    monkeypatch.setattr(parse, "CHUNK_BYTES", 16 << 10)
    monkeypatch.setattr(parse, "_READ_BLOCK", 4 << 10)


@pytest.mark.parametrize("kind", ["name", "space", "args"])
def test_one_long_event_takes_logarithmically_many_reads(small_blocks, kind):
    size = 2 << 20
    stream = _CountingStream(hk.long_event(kind, size))
    kt = parse.parse_trace(stream, workers=1, name="long.json")
    assert len(kt) == hk.STEPS * (1 + 3 * hk.KERNELS_PER_STEP) + 1
    # doubling from 16 kB to 2 MB is 7 growths; growing one chunk at a time was 128 reads
    assert stream.reads <= 2 * math.log2(size / (16 << 10)) + 8, stream.reads


@pytest.mark.parametrize("decoder", ["json", "msgspec"])
def test_one_long_event_peaks_at_a_few_times_its_length(decoder):
    size = 8 << 20
    stream = io.BytesIO(hk.long_event("name", size))
    tracemalloc.start()
    try:
        parse.parse_trace(stream, workers=1, decoder=decoder, name="long.json")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak <= 5 * size, f"{peak / size:.1f}x the event"


def test_whitespace_between_events_is_dropped_as_read(small_blocks):
    size = 4 << 20
    stream = io.BytesIO(hk.long_gap(size))
    tracemalloc.start()
    try:
        kt = parse.parse_trace(stream, workers=1, name="gap.json")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(kt) == hk.STEPS * (1 + 3 * hk.KERNELS_PER_STEP)
    assert peak < size / 8, f"{peak:,} bytes for a {size:,}-byte run of whitespace"


def _write(tmp_path, data: bytes) -> str:
    run = tmp_path / "run1"
    run.mkdir(parents=True, exist_ok=True)
    path = run / "worker.1700000000000.pt.trace.json"
    path.write_bytes(data)
    return str(path)


def _read(tmp_path, data: bytes):
    return formats.read(HostFile(host="worker", path=_write(tmp_path, data), size=len(data), mtime_ns=0, format="kineto"))


def test_a_long_name_is_cut_once_with_a_note(tmp_path):
    trace = _read(tmp_path, hk.long_event("name", 3 * MAX_NAME_CHARS))
    assert max(map(len, trace.h.names)) < MAX_NAME_CHARS + 64
    assert any("cut" in n for n in trace.notes)
    assert not trace.problems  # long, not damaged


def test_the_sane_trace_has_no_damage(tmp_path):
    trace = _read(tmp_path, hk.trace(hk.base_events()))
    assert trace.problems == []


@pytest.mark.parametrize("kind", sorted(hk.TIME_KINDS))
def test_times_no_clock_writes_are_damage(tmp_path, kind):
    path = _write(tmp_path, hk.TIME_KINDS[kind]())
    report = analyze_session("run1", "s", [HostFile(host="worker", path=path, size=0, mtime_ns=0, format="kineto")])
    host = report.hosts[0]
    assert host.error or host.damage, f"{kind}: read as undamaged: {report.verdict}"
    assert not report.healthy and not report.verdict.startswith("Healthy")


def test_the_cli_exits_2_on_nonsense_times(tmp_path):
    _write(tmp_path, hk.TIME_KINDS["ts_all_zero"]())
    r = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-m", "tb_gpu_advisor.cli", "report",
                        str(tmp_path), "--format", "json", "--cache-dir", "off"],
                       capture_output=True, text=True, cwd=REPO, timeout=120, check=False)
    assert r.returncode == 2, r.stderr[-500:]
    report = json.loads(r.stdout)["reports"][0]
    # every event at one instant: a file read whole whose records contradict each other (h37-damage66: not "partial")
    assert report["verdict"].startswith("damaged: the file's records contradict each other (all "), report["verdict"]
    assert "RuntimeWarning" not in r.stderr


@pytest.mark.parametrize("kind", ["overlapping_everything", "zero_durations"])
def test_xplane_files_with_one_instant_or_no_durations_are_damage(tmp_path, kind):
    from synthetic import hostile

    path = hostile.write_capture(tmp_path, "run", hostile.KINDS[kind]())
    trace = formats.read(HostFile(host="h", path=str(path), size=0, mtime_ns=0, format="xplane"))
    assert trace.problems, kind
