"""The copy finding's saving counts only what its fixes remove: a program's own Unified Memory prefetch is the upload
its data needs, done as the fixes ask (issue #37, survey h37-survey10).

The real case (ayanamesu/Performance-Analysis-of-GPU-Using-CUDA-on-Perlmutter ``Reports from Perlmutter/report4.sqlite``
@98d9866, no licence, so not kept: ``tests/fixtures/wild/SURVEY.md``, "Survey h37-survey10"): NVIDIA's vector add on an
A100 prefetches both managed buffers (2,048 "User prefetch" migrations, 164.8 ms with the GPU idle) before its kernel;
the host's check pulls the result back on demand (12,288 page faults, 110.3 ms).  Main's saving was 275 ms: the
prefetch counted as a copy the fix (prefetch) would remove.  Now 110.3 ms.

By construction (``synthetic.nsysexport.write_prefetched_vector_add``): the truth's on-demand read-back is the
saving; the same program without the prefetch (its pages faulted in under the kernel) is the control.
"""

from __future__ import annotations

import re

import pytest

from synthetic import nsysexport as nx
from tests.support.cli_report import ran_report


def _copies(path: str) -> dict:
    code, report = ran_report(path)
    assert code == 0
    return next(f for f in report["findings"] if f["rule"] == "excessive_memcpy")


def test_the_programs_own_prefetch_is_no_saving(tmp_path) -> None:  # noqa: ANN001 - pytest's
    """Only the on-demand read-back is paging the fix removes; the prefetch is named as the program's, left out."""
    path = str(tmp_path / "report4.sqlite")
    truth = nx.write_prefetched_vector_add(path)
    f = _copies(path)
    assert f["saving"]["ms_per_step"] == pytest.approx(truth["on_demand_ms"], rel=0.02)
    assert f["saving"]["ms_per_step"] < truth["prefetch_ms"] + truth["on_demand_ms"] - 1.0
    # a capture of one kept step says "in the step" (rules.base.Ctx.per_step, h37-left60)
    assert re.search(rf"{truth['prefetch_ms']:.1f} ms (?:per step|in the step|in the pass) is the program's own Unified Memory "
                     r"prefetch", f["summary"]), f["summary"]


def test_pages_faulted_in_without_a_prefetch_are_all_saving(tmp_path) -> None:  # noqa: ANN001 - pytest's
    """Control: with no prefetch of the program's, every migration is the driver's paging, all of it in the saving
    (the kernel's faults and the read-back), and no prefetch is named."""
    path = str(tmp_path / "vecadd.sqlite")
    truth = nx.write_managed_kernel(path)
    f = _copies(path)
    assert f["saving"]["ms_per_step"] >= truth["paging_in_kernel_ms"] + truth["dtoh_migration_ms"] - 1.0
    assert "own Unified Memory prefetch" not in f["summary"]
