"""A forward-only loop with autograd on, recorded without stacks: the memory table's activations are the bytes the
finding says the forward kept (issue #37 class 5, h37-snap69).

``as_recorded(forward_only(), context=None)`` (truth by construction: 24 layers x 4 tensors a pass kept until the output
is dropped): main's finding read "9.00 GiB that the forward pass allocated (read from the allocation pattern ...)"
while the table's activations column read "-", the 9 GiB booked "other" -- one quantity, two values.  With stacks the
column reads the same bytes; the ``no_grad`` control keeps none to book."""

from __future__ import annotations

from pathlib import Path

from synthetic import memsnapshot as ms
from tests.support.snapshot_report import report


def test_the_kept_forward_is_the_tables_activations_without_stacks(tmp_path: Path):
    sc = ms.forward_only()
    framed = report(tmp_path, sc.doc, "framed").gpus[0].memory
    bare_rep = report(tmp_path, ms.as_recorded(sc.doc, context=None), "bare")
    (f,) = [f for f in bare_rep.findings if f.rule == "activation_memory"]
    bare = bare_rep.gpus[0].memory
    assert f.metric.detail["kept_bytes"] == sc.truth["kept_bytes"]
    assert bare["breakdown"].get("activations") == sc.truth["kept_bytes"] == framed["breakdown"]["activations"]
    assert "allocation pattern" in bare["note"]
