"""Copies to the GPU that the trace shows pinned and asynchronous are not advised to be pinned and made asynchronous.

A copy record names its host memory (CUPTI's ``Memcpy HtoD (Pinned -> Device)``) and the host's calls show whether
it held the host: where every upload is pinned and none held the host, "copy batches to the GPU asynchronously from
pinned memory" is what the program does (``wild/d2d_v100``: 25 pinned, asynchronous uploads per step, told so under
its copies finding).  Truth by construction: the generator's ``input_bound`` scenario copies each batch from pinned
memory with ``cudaMemcpyAsync``; a pageable copy of the same batch holds the host in its stream's sync.
"""

from __future__ import annotations

import pytest

from synthetic import torchtrace
from tb_gpu_advisor import formats, rules
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.frameworks import pytorch
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.paths import FIXTURES
from tests.support.properties import in_use_problems
from tests.support.run_report import run_report


def _metrics(folder, run):
    (s,) = [s for s in discover(str(folder)) if s.run == run]
    (hf,) = s.hosts
    return host_metrics(formats.read(hf))


def _told(findings) -> list[str]:
    return [f.rule for f in findings for a in f.actions if a.text == pytorch.NON_BLOCKING.text]


def test_a_loop_whose_batches_are_copied_pinned_and_async_is_not_told_to_do_so(tmp_path):
    torchtrace.write_run(str(tmp_path), "input_bound")
    m = _metrics(tmp_path, "input_bound")
    found = rules.evaluate(m)
    assert not _told(found)
    f = next(f for f in found if f.rule == "input_bound")
    assert "Already in use, so not suggested: pinned, asynchronous copies to the GPU" in " ".join(f.summary.split())
    assert "pinned_async_h2d" in m.applied


def test_a_pageable_upload_is_still_told_to_pin(tmp_path):
    """The control: the same loop copying its batch from pageable memory (the host held in the copy's sync)."""
    torchtrace.write_run(str(tmp_path), torchtrace.PAGEABLE_INPUT, run="pageable_batch")
    m = _metrics(tmp_path, "pageable_batch")
    assert "pinned_async_h2d" not in m.applied
    assert pytorch.NON_BLOCKING.text in [a.text for f in rules.evaluate(m) if f.rule == "input_bound" for a in f.actions]


@pytest.mark.skipif(not (FIXTURES / "wild" / "d2d_v100").is_dir(), reason="fixture absent")
def test_d2d_v100_s_pinned_uploads_are_not_advised_again():
    """Read by hand (PROVENANCE.md's d2d_v100): its 25 H2D copies per step are all ``Memcpy HtoD (Pinned -> Device)``,
    launched by ``cudaMemcpyAsync`` with no sync of their own; the copies finding told it to copy them so."""
    r = run_report(FIXTURES / "wild", "d2d_v100")
    (h,) = r.hosts
    assert not _told(h.findings)
    assert not in_use_problems(h.host, h)
    assert "pinned_async_h2d" in h.capture["applied"]
