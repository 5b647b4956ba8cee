"""A blocking pageable copy waits for its own copy and for the driver's staging, not for GPU work the capture does
not show (issue #37, survey h37-survey7a).

The real case (kamalchowdhury326/HW5_helper ``report1.sqlite`` @81216fee, no licence, so not kept: ``tests/fixtures/
wild/SURVEY.md``): an A100 transpose benchmark whose five blocking ``cudaMemcpy`` read-backs of 4 MB into pageable
memory last 0.62-2.45 ms around DMAs of 0.41-0.91 ms; the rest of each call is the driver copying the bytes out of its
pinned staging buffer (3.3 GB/s), with the GPU idle.  Main took each for a wait on GPU work the file does not hold
("The host waits for GPU work the capture does not show", a warning) -- the advice to profile the whole step.

By construction (``synthetic.nsysexport.write_pageable_readbacks``): the same calls, with staging alone (not unseen),
and with a 50 ms wait before the DMA (as a window cut out of a longer capture shows: unseen, as before).
"""

from __future__ import annotations

from synthetic import nsysexport as nx
from tests.support.cli_report import first_report


def test_staging_a_pageable_read_back_is_no_unseen_gpu_work(tmp_path) -> None:  # noqa: ANN001 - pytest's
    path = str(tmp_path / "staged.sqlite")
    nx.write_pageable_readbacks(path, staging_ms=1.3)  # 4 MB in 1.3 ms: 3.2 GB/s, as the real benchmark's
    rep = first_report(path)
    assert rep["hosts"][0]["job"]["unseen_gpu_ms"] == 0.0
    assert not any("does not show" in f["title"] for f in rep["findings"])


def test_a_copy_call_that_waits_far_beyond_its_bytes_is_still_unseen_work(tmp_path) -> None:  # noqa: ANN001
    path = str(tmp_path / "cut.sqlite")
    truth = nx.write_pageable_readbacks(path, staging_ms=1.3, wait_ms=50.0)
    unseen = first_report(path)["hosts"][0]["job"]["unseen_gpu_ms"]
    # the whole call is booked (its wait, DMA and staging: one span), never more than the calls themselves
    assert truth["wait_ms"] <= unseen <= truth["call_beyond_dma_ms"] + truth["copies"] * 0.7 + 1e-6
