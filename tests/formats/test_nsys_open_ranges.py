"""NVTX ranges a program pushed and never popped end, in an Nsight export, at the session's end to the nanosecond: the
reader ends them with the last thing the process was recorded doing (survey h37-survey39).

Truth read off the raw SQLite of ``tests/fixtures/wild/mmagic_a100_pyprof_forward/net.sqlite`` (yyhtbs-yye/mmagic_vsr_v2,
Apache-2.0): PyProf's wrapper pushed a range around each ``torch`` call of a model's ``print`` (``__getattr__`` of
``extra_repr``, which raises, so the wrapper never popped): 1,404 of its 1,956 ranges end at exactly
``ANALYSIS_DETAILS.duration`` (7,567,799,547 ns), 0.70 s after the process's last OS call (6,864,977,486 ns) and 0.84 s
after its last CUDA call.  Its closed ranges (``Tensor.cuda`` 1,265.46 ms: the context created in the model's first
``.cuda()``) keep their ends; an NVTX-only window's range open at the end (``find_centers`` in
``nsys_windows/nvtx_only_centerformer.sqlite``, 66.4 ms) has nothing else to end it by and is kept whole.
"""

from __future__ import annotations

import numpy as np
import pytest

from tb_gpu_advisor import devices
from tb_gpu_advisor.formats.nsys.reader import read_trace
from tests.support.paths import FIXTURES
from tests.support.sqlite_edits import query

MMAGIC = FIXTURES / "wild" / "mmagic_a100_pyprof_forward" / "net.sqlite"
CENTERFORMER = FIXTURES / "nsys_windows" / "nvtx_only_centerformer.sqlite"


@pytest.fixture(scope="module")
def mmagic():
    return read_trace(str(MMAGIC))


def test_the_export_holds_ranges_ended_at_the_sessions_end():
    """The fixture's premise, from the SQLite alone: the open ranges end at the session's end, after everything else."""
    (duration,), = query(MMAGIC, "SELECT duration FROM ANALYSIS_DETAILS")
    (n,), = query(MMAGIC, f"SELECT count(*) FROM NVTX_EVENTS WHERE \"end\" = {duration}")
    (last_os,), = query(MMAGIC, "SELECT max(\"end\") FROM OSRT_API")
    (last_call,), = query(MMAGIC, "SELECT max(\"end\") FROM CUPTI_ACTIVITY_KIND_RUNTIME")
    assert n == 1404
    assert duration - max(last_os, last_call) > 500_000_000  # ns: over half a second after the process's last call


def test_ranges_open_at_the_capture_end_end_with_the_process(mmagic):
    """No range outlasts what the process was recorded doing: its runtime calls, GPU work and OS calls."""
    h = mmagic.h
    calls = h.name_mask(devices.is_runtime_call)
    last = max([int(h.end[calls].max()), int(mmagic.host_waits.end.max())]
               + [int(d.end.max()) for d in mmagic.devices if len(d.end)])
    assert int(h.end.max()) <= last


def test_control_ranges_the_program_closed_keep_their_ends(mmagic):
    """The ``Tensor.cuda`` range around the context's creation, closed by the program, keeps its 1,265.46 ms."""
    rows = query(MMAGIC, "SELECT \"end\" - start FROM NVTX_EVENTS WHERE text LIKE '{''mod'': ''Tensor'', ''op'': ''cuda''%' "
                        "ORDER BY \"end\" - start DESC LIMIT 1")
    longest_ns = rows[0][0]
    h = mmagic.h
    cuda = h.name_mask(lambda n: n == "Tensor.cuda")
    assert cuda.any()
    got_ms = float((h.end[cuda] - h.start[cuda]).max()) / 1e9
    assert got_ms == pytest.approx(longest_ns / 1e6, abs=1e-3)
    assert got_ms > 1000.0


def test_control_an_nvtx_only_windows_open_range_runs_to_the_capture_end():
    """With nothing but ranges in the window, nothing shows the process stopped first: ``find_centers`` keeps its
    66.4 ms to the capture's end."""
    (duration,), = query(CENTERFORMER, "SELECT duration FROM ANALYSIS_DETAILS")
    (start,), = query(CENTERFORMER, f"SELECT start FROM NVTX_EVENTS WHERE \"end\" = {duration}")
    t = read_trace(str(CENTERFORMER))
    h = t.h
    mine = h.name_mask(lambda n: n == "find_centers")
    lengths = (h.end[mine] - h.start[mine]).astype(np.int64)
    assert np.isclose(lengths / 1e3, duration - start, atol=1).any()  # ps -> ns
