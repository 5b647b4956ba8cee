"""A copy whose stream the file did not record is on no stream known -- neither one of its own nor the kernels' (issue
#37 class 3, each wait to its cause; h37-review61b's Left 1).

rocprofv3's copy trace before ROCm 6.4 has neither a ``Stream_Id`` nor a ``Queue_Id`` column (its kernel trace has
``Queue_Id``): the reader filled each copy's queue with 0, a queue on which the GPU ran no kernel, so
``MemcpyStat.own_stream_share`` read 1.0 -- "the copies already run on a stream of their own" -- of copies whose stream
nothing records.  Now the reader marks them (``DeviceEvents.stream_unrecorded``, a stream named "queue not recorded")
and the share is None: the rules' own-stream reading and words are skipped.

Truth: the real ``wild/hip_matmul_rdna2_igpu`` (rocprofv3 CSV, PROVENANCE.md; its ``output_memory_copy_trace.csv``
header read by hand: ``Kind, Direction, Source_Agent_Id, Destination_Agent_Id, Correlation_Id, Start_Timestamp,
End_Timestamp``, its kernels on ``Queue_Id`` 1), and ``synthetic.rocprofv3trace.write`` in both layouts (the old one as
ROCm 6.2 writes it, no stream column; the new one ``Stream_Id`` 0 for kernels and copies alike: recorded, shared).
"""

from __future__ import annotations

import glob
from pathlib import Path

import pytest

from synthetic import rocprofv3trace
from tb_gpu_advisor import devices, formats
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.formats.rocprof.csv_reader import read_trace
from tb_gpu_advisor.runtime.pipeline import host_metrics

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
STEPS = [[("gemm_kernel(float*)", 400.0), ("relu(float*)", 50.0)]] * 6


def _copies(trace) -> dict:  # noqa: ANN001 - a Trace; direction -> MemcpyStat
    m = host_metrics(trace)
    m = m[0] if isinstance(m, tuple) else m
    return {c.direction: c for c in m.memcpy}


def _generated(tmp_path: Path, layout: str):  # noqa: ANN202 - the capture's Trace
    rocprofv3trace.write(str(tmp_path), STEPS, layout=layout)
    files = sorted(glob.glob(str(tmp_path / "*.csv")))
    return read_trace(next(f for f in files if f.endswith("kernel_trace.csv")), ranks=files)


def test_a_real_rocprofv3_copy_trace_without_streams_is_on_no_stream_of_its_own() -> None:
    """Fails on base: the copies read as on queue 0, a queue of their own (share 1.0 each way)."""
    (s,) = [s for s in discover(str(FIXTURES / "wild")) if s.run == "hip_matmul_rdna2_igpu"]
    (hf,) = s.hosts
    trace = formats.read(hf)
    (d,) = trace.devices
    assert d.stream_names[d.stream_unrecorded] == "queue not recorded", d.stream_names
    copies = _copies(trace)
    assert set(copies) >= {"h2d", "d2h"}, copies
    assert all(c.own_stream_share is None for c in copies.values()), {k: c.own_stream_share for k, c in copies.items()}


@pytest.mark.parametrize("layout", ["old", "new"])
def test_a_generated_capture_s_copy_stream_is_marked_only_where_unrecorded(tmp_path: Path, layout: str) -> None:
    """Fails on base for both (no mark).  The old layout's copies (no stream column) are on the stream marked not
    recorded, its kernels on their queue; the new layout's (``Stream_Id`` 0 each) mark nothing."""
    trace = _generated(tmp_path, layout)
    (d,) = trace.devices
    copy = d.kind != devices.KIND_KERNEL
    if layout == "old":
        assert d.stream_names[d.stream_unrecorded] == "queue not recorded", d.stream_names
        assert (d.stream[copy] == d.stream_unrecorded).all() and (d.stream[~copy] != d.stream_unrecorded).all()
    else:
        assert d.stream_unrecorded == -1 and d.stream_names == ["stream 0"], d.stream_names


def test_a_recorded_queue_equal_to_the_filler_is_not_merged(tmp_path: Path) -> None:
    """The copies of no stream get their own stream index, apart from any recorded queue -- even one numbered 0, the
    number the reader used to fill in (kernels on queue 0 here): the kernels' queue keeps only kernels."""
    rocprofv3trace.write(str(tmp_path), STEPS, layout="old")
    k = next(Path(p) for p in glob.glob(str(tmp_path / "*kernel_trace.csv")))
    lines = k.read_text().splitlines()
    head = [c.strip('"') for c in lines[0].split(",")]
    q = head.index("Queue_Id")
    rows = [r.split(",") for r in lines[1:]]
    for r in rows:
        r[q] = "0"
    k.write_text("\n".join([lines[0]] + [",".join(r) for r in rows]) + "\n")
    files = sorted(glob.glob(str(tmp_path / "*.csv")))
    (d,) = read_trace(str(k), ranks=files).devices
    assert d.stream_names == ["queue 0", "queue not recorded"], d.stream_names
    on_zero = d.kind[d.stream == 0]
    assert on_zero.size and (on_zero == d.kind[d.stream == 0][0]).all()  # one kind: the kernels alone
    assert (d.stream == d.stream_unrecorded).sum() == len(d) - on_zero.size
