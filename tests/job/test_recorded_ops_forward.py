"""A PyTorch forward pass shown by its ops recorded as NVTX ranges (PyProf / DLProf's ``{'mod': ..., 'op': ...}``),
with no backward, is inference -- not "GPU work of an unknown kind" (issue #37 class 1, what the window holds; survey
h37-survey39's second item left for the lead).

The wrong assumption: only ATen's names (``aten::``) show that PyTorch's ops were recorded.  PyProf and DLProf wrap
every ``torch``, ``Tensor`` and ``torch.nn.functional`` call in a range, so a training step shows the program's
``loss.backward()`` as ``Tensor.backward``, and PyTorch's autograd engine launches a CUDA backward's kernels from a
device thread of its own, outside any such range.  ``tests/fixtures/wild/mmagic_a100_pyprof_forward`` (one forward
pass of a video network on an A100 under PyProf) records 978 op ranges, none a backward, and one thread makes every
CUDA call: main read it "GPU work of an unknown kind" and gave training's fix (autocast, "no loss scaling in
training") for a forward pass.

Generated (``synthetic.nsysexport.write_unrecorded_context(pyprof=...)``, truth by construction): a forward under
PyProf is inference; the same program with a backward -- its ``Tensor.backward`` range, autograd's thread launching
the kernels -- is training; a backward the tool does not name (``torch.autograd.grad``) is never called inference,
its kernels being launched from a thread that recorded no op.  Controls: every other kept Nsight export keeps its
kind's evidence.
"""

from __future__ import annotations

import json
import sqlite3
from types import SimpleNamespace

import pytest

from synthetic.nsysexport import PYPROF_PASSES, write_unrecorded_context
from tb_gpu_advisor import frameworks
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.formats import read
from tb_gpu_advisor.job.kind import work_kind
from tests.support.paths import FIXTURES
from tests.support.report_store import session_report

MMAGIC = FIXTURES / "wild" / "mmagic_a100_pyprof_forward" / "net.sqlite"
WORDS = "PyTorch's calls recorded as op ranges"


def _kind(path):
    trace = read(SimpleNamespace(host="h", path=str(path), format="nsys"))
    return work_kind(trace, frameworks.detect_trace(trace))


def test_the_files_own_evidence_pyprof_ops_no_backward_one_launching_thread():
    con = sqlite3.connect(f"file:{MMAGIC}?mode=ro", uri=True)
    try:
        texts = [t for (t,) in con.execute("SELECT text FROM NVTX_EVENTS WHERE text LIKE '{''mod''%'")]
        threads = con.execute("SELECT COUNT(DISTINCT globalTid) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s "
                              "ON s.id = r.nameId WHERE s.value LIKE 'cudaLaunchKernel%'").fetchone()[0]
    finally:
        con.close()
    assert len(texts) == 978 and threads == 1
    assert not [t for t in texts if "backward" in t.lower() or "step" in t.lower()]
    assert any(t.startswith("{'mod': 'torch.nn.functional', 'op': 'conv2d'") for t in texts)


def test_a_forward_pass_recorded_by_pyprof_is_inference_with_inference_fixes():
    kind = _kind(MMAGIC)
    assert (kind.kind, kind.confidence) == ("inference", "medium") and WORDS in kind.evidence, kind
    (s,) = [s for s in discover(str(MMAGIC.parent))]
    host = session_report(s).to_dict()["hosts"][0]
    assert host["job"]["kind"] == "inference"
    fp32 = next(f for f in host["findings"] if f["rule"] == "mixed_precision_off")
    text = json.dumps(fp32["actions"])
    assert "inference_mode" in text and "loss scaling in training" not in text, text[:600]


@pytest.mark.parametrize("pyprof", PYPROF_PASSES)
def test_generated_pyprof_passes_read_as_their_truth(tmp_path, pyprof):
    truth = write_unrecorded_context(str(tmp_path / "r.sqlite"), pyprof=pyprof)
    kind = _kind(tmp_path / "r.sqlite")
    if pyprof == "forward":
        assert kind.kind == "inference" and WORDS in kind.evidence, kind
    elif pyprof == "backward":
        assert truth["backward"] and kind.kind == "training" and "`Tensor.backward`" in kind.evidence, kind
    else:  # no op recorded, or a backward the tool does not name: never said to be a forward pass
        assert kind.kind != "inference" and WORDS not in kind.evidence, kind


@pytest.mark.parametrize("path", sorted(p for p in (FIXTURES / "wild").glob("*/*.sqlite") if p != MMAGIC),
                         ids=lambda p: p.parent.name)
def test_control_other_exports_keep_their_kinds_evidence(path):
    assert WORDS not in _kind(path).evidence
