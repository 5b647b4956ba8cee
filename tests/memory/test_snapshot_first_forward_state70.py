"""A first forward that runs out of memory, recorded with ``context="state"``, is no "inference" (issue #37 class 5,
deliverable 5: the job kind from the allocation pattern; session 70 snap70).

``synthetic.memsnapshot.oom_first_forward`` writes one history for two jobs: a training step's first forward and a
forward run for its output alone both die before their forward ends (truth ``kind`` None).  Recorded with stacks on
its entries the kind reads "unknown" (``job.kind._forward_unended``).  ``_record_memory_history(context="state")``
keeps the blocks' stacks and drops the entries' (``as_recorded``): base dbf6cf15 read the forward blocks live at the
dump as "inference (medium)" -- handing a training step ``inference_mode``.  Now the stackless history says the same
as the framed one from its pattern: no graph freed at once (a pass that ended), its level climbing to the OOM.
Controls: forward-only loops whose passes end (``oom_forward_graph``, ``forward_only``, ``forward_rebound``) keep
"inference" under ``context="state"`` -- their graphs are freed in one cascade each -- and a training OOM keeps
"training"."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tests.support.cli_report import cli_report


def _kind(tmp_path: Path, doc: dict) -> tuple[str, str]:
    report = cli_report(ms.write(str(tmp_path / "run" / "snapshot.pickle"), doc))
    job = report["hosts"][0]["job"]
    return job["kind"], job["kind_evidence"]


@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("temporaries", [False, True])
def test_a_first_forward_oom_recorded_state_only_is_no_inference(tmp_path: Path, train: bool, temporaries: bool):
    s = ms.oom_first_forward(train=train, temporaries=temporaries)
    assert s.truth["oom"] and s.truth["kind"] is None
    framed, _ = _kind(tmp_path / "framed", s.doc)
    kind, evidence = _kind(tmp_path / "state", ms.as_recorded(s.doc, context="state"))
    assert framed == kind == "unknown"
    assert "still climbing" in evidence and "look the same here" in evidence


@pytest.mark.parametrize("doc", [
    pytest.param(lambda: ms.oom_forward_graph().doc, id="oom_forward_graph"),
    pytest.param(lambda: ms.forward_only().doc, id="forward_only"),
    pytest.param(lambda: ms.forward_rebound().doc, id="forward_rebound"),
    pytest.param(lambda: ms.inference_loop().doc, id="inference_loop"),
])
def test_forward_only_loops_whose_passes_end_stay_inference(tmp_path: Path, doc):
    """Control (passes on base): a pass that ended frees its graph in one cascade -- inference, as framed."""
    assert _kind(tmp_path, ms.as_recorded(doc(), context="state"))[0] == "inference"


def test_a_training_oom_recorded_state_only_stays_training(tmp_path: Path):
    """Control (passes on base): the dump's Adam state says training (h37-snap69)."""
    assert _kind(tmp_path, ms.as_recorded(ms.oom_activations().doc, context="state"))[0] == "training"
