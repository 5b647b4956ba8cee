"""The job's kind reads what a framework records through the framework's interface, never its id (h37-tidy).

``job.kind`` kept two ``fw.id == "pytorch"`` branches: ATen ops with no autograd ``*Backward`` node are a forward
pass, and PyProf/DLProf op ranges with no ``Tensor.backward`` and every launch on a recording thread are one.  That
is what PyTorch records, so it is PyTorch's to say (``Framework.autograd_op``, ``Framework.op_ranges_show_backward``,
the ``ops`` and ``backward_nodes`` labels).  On real captures of both (a Kineto forward pass: cold_a100_alexnet; an
Nsight export under PyProf: mmagic_a100_pyprof_forward) PyTorch's reading is the one the report gave; a framework that
does not record so reads neither."""

from __future__ import annotations

import ast
import dataclasses

import pytest

from tb_gpu_advisor import formats, frameworks
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.frameworks.base import never
from tb_gpu_advisor.job.kind import work_kind
from tests.support.paths import FIXTURES, REPO

ATEN = "ATen ops ran but no backward pass (autograd's `*Backward` nodes) and no optimizer step: a forward pass"
PYPROF = "PyTorch's calls recorded as op ranges (978 ops), no backward pass, optimizer step or gradient kernel, " \
         "every launch on a thread that recorded them: a forward pass"


def _read(name: str):  # noqa: ANN202 - a Trace
    (session,) = discover(str(FIXTURES / "wild" / name))
    return formats.read(session.hosts[0])


def test_the_job_kind_compares_no_framework_id() -> None:
    tree = ast.parse((REPO / "tb_gpu_advisor" / "job" / "kind.py").read_text())
    ids = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Compare)
           for side in (node.left, *node.comparators)
           if isinstance(side, ast.Attribute) and side.attr == "id" and isinstance(side.value, ast.Name)
           and side.value.id == "fw"]
    assert not ids, f"job/kind.py compares fw.id on lines {ids}"


@pytest.mark.parametrize(("name", "words", "knowledge"), [
    ("cold_a100_alexnet", ATEN, {"autograd_op": never}),
    ("mmagic_a100_pyprof_forward", PYPROF, {"op_ranges_show_backward": False}),
])
def test_a_forward_pass_is_read_from_what_the_framework_records(name: str, words: str, knowledge: dict) -> None:
    trace = _read(name)
    fw = frameworks.detect_trace(trace)
    assert fw.id == "pytorch"
    kind = work_kind(trace, fw)
    assert (kind.kind, kind.confidence, kind.evidence) == ("inference", "medium", words)
    unaware = work_kind(trace, dataclasses.replace(fw, **knowledge))
    assert unaware.evidence != words
