"""The pageable copies the pinning fix names are told by their own sizes, never by their mean as if each were that size
(h37-hunt69b, issue #37: right on captures unlike ours).

Real case: ``tests/fixtures/wild/vit_a4000_pageable_batch`` (see PROVENANCE.md): a ViT step on an RTX A4000 whose
batch is copied from pageable memory -- one ``Memcpy HtoD (Pageable -> Device)`` of 154,140,672 B (the images) and one
of 2,048 B (the labels), read off the trace's ``args.bytes``.  On b2a0d583 the copy finding said "the 2 H2D copies of
77.1 MB each in the step": the mean of the two, a size no copy has, and the 2 KB label copy (nothing to pin) counted as
half the upload.  Found on a capture of another's job: abdualrhman/attention_cuda ``run1.sqlite`` (a CUDA C attention
benchmark on an H100 PCIe, no licence, not kept) uploads one 25.2 MB input and three 98.3 KB weight matrices, and was
told "the 4 H2D copies of 6.4 MB each".  ``MemcpyStat.pageable_min_bytes`` / ``pageable_max_bytes`` carry the range;
``rules.excessive_memcpy._sizes`` says it where the largest is over twice the smallest.  The control: copies of one
size keep "of 1.2 MB each"."""

from __future__ import annotations

from pathlib import Path

from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.metrics.types import MemcpyStat
from tb_gpu_advisor.rules import evaluate
from tb_gpu_advisor.rules.excessive_memcpy import _sizes
from tb_gpu_advisor.runtime.pipeline import host_metrics

_REAL = (Path(__file__).resolve().parents[1] / "fixtures" / "wild" / "vit_a4000_pageable_batch"
         / "vit_a4000.1436345.pt.trace.json.gz")


def test_a_batch_and_its_labels_are_two_sizes_not_a_mean():
    m = host_metrics(read_trace(str(_REAL)))
    (h2d,) = [c for c in m.memcpy if c.direction == "h2d"]
    assert (h2d.pageable_min_bytes, h2d.pageable_max_bytes) == (2048, 154140672)
    (f,) = [f for f in evaluate(m) if f.rule == "excessive_memcpy"]
    words = f.summary + " ".join(a.text for a in f.actions)
    assert "77.1 MB each" not in words
    assert "the 2 H2D copies of 2.0 KB to 154.1 MB" in words


def test_copies_of_one_size_keep_each():
    alike = MemcpyStat("h2d", 3.0, 3.6e6, 1.0, 0.0, 0.0, True, pageable_count_per_step=3.0,
                       pageable_bytes_per_step=3.6e6, pageable_min_bytes=1.2e6, pageable_max_bytes=1.2e6)
    assert _sizes(alike, 1.2e6) == " of 1.2 MB each"
    unknown = MemcpyStat("h2d", 3.0, 0.0, 1.0, 0.0, 0.0, True, pageable_count_per_step=3.0)
    assert _sizes(unknown, 0.0) == ""
