"""Unified Memory migrations the program asked for (``cudaMemPrefetchAsync``) are its own copies, not the driver's
paging (survey h37-survey10).

The real case (ayanamesu/Performance-Analysis-of-GPU-Using-CUDA-on-Perlmutter ``Reports from Perlmutter/report4.sqlite``
@98d9866, no licence, so not kept: ``tests/fixtures/wild/SURVEY.md``, "Survey h37-survey10"): NVIDIA's vector add
on an A100 with ``cudaMemPrefetchAsync`` of both managed buffers before its one ``add<<<1, 256>>>``.  Its 2,048
migrations to the GPU (164.8 ms) carry ``migrationCause`` 1, "User prefetch"; the 12,288 back to the host (the result
check) 2 and 3, page faults and the driver's speculative prefetch.  Main called all of them "page migrations ... on
demand ..., copies no call of the program asked for" and told the program to prefetch, which it does.

By construction: ``synthetic.nsysexport.write_managed_kernel``'s migrations to the GPU, marked as the program's
prefetch; the read-back faults stay the driver's paging (the control).
"""

from __future__ import annotations

import sqlite3

from synthetic import nsysexport as nx
from tb_gpu_advisor import devices
from tb_gpu_advisor.formats.nsys import reader
from tests.support.cli_report import first_report

_USER_PREFETCH, _UVM_HTOD = 1, 11


def _prefetched(path: str) -> None:
    """The vector add's uploads as the program's own prefetch (the export's ``migrationCause`` "User prefetch")."""
    nx.write_managed_kernel(path)
    con = sqlite3.connect(path)
    con.execute("UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET migrationCause = ? WHERE copyKind = ?", (_USER_PREFETCH, _UVM_HTOD))
    con.commit()
    con.close()


def test_a_user_prefetch_is_named_as_the_program_s_copy(tmp_path) -> None:  # noqa: ANN001 - pytest's
    path = str(tmp_path / "report4.sqlite")
    _prefetched(path)
    d = reader.read_trace(path).devices[0]
    names = {d.names[int(i)] for i in set(d.name.tolist())}
    assert f"Memcpy HtoD ({devices.UM_PREFETCH})" in names
    assert f"Memcpy DtoH ({devices.PAGE_MIGRATION})" in names  # the result check's faults stay the driver's
    assert not any(devices.PAGE_MIGRATION in n and "HtoD" in n for n in names)


def test_the_report_calls_only_the_read_back_paging(tmp_path) -> None:  # noqa: ANN001 - pytest's
    path = str(tmp_path / "report4.sqlite")
    _prefetched(path)
    copies = [f for f in first_report(path)["findings"] if f["id"].startswith("excessive_memcpy")]
    assert copies, "the read-back's paging still blocks the GPU"
    text = copies[0]["summary"]
    assert "of the D2H copy time" in text and "of the H2D copy time" not in text
