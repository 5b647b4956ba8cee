"""A training loop recorded without stacks books its peak's activations and gradients from its allocation pattern,
as the job stage reads its phases (h37-stackless65; issue #37 class 5: the job kind from the allocation pattern where
no frame is kept).

Why: ``_record_memory_history(context=None)`` keeps no frame, so every allocation read "other" and the peak's
breakdown held 369 MB "other" (96 MiB of activations, 256 MiB of gradients, a 512-byte loss) beside a training job
whose iterations the job stage read from the same pattern (``job.iterations.pattern_phases``; h37-snap64 *Left* 2).
Read off each backward's walk back (``metrics.memory._pattern_phased``): the blocks it frees are activations, those
it makes (and its first op's gradient, made before its first free and freed by ``zero_grad()``) gradients; what the
pattern cannot tell stays "other".  Truth by construction (``synthetic.memsnapshot.training_iterations``: 4
parameters of 64 MiB, 6 activations of 32 MiB, a gradient made before each of the last 4 layers' saved tensor is
freed, so at the peak 3 activations, 4 gradients and the 512-byte loss are live; ``short``: odd requests in the same
512-byte blocks); and a real Adam loop with its frames dropped.  9 of the 15 fail on base (every part "other", no
note, no activations finding); the one whose peak holds no activation
(``step_after_walk``), the inference and the framed ones are controls (unchanged)."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.metrics.memory import PATTERN_PARTS
from tests.support.properties import memory_unit_problems
from tests.support.snapshot_reports import report, written

ACTIVATIONS = 3 * 32 * ms.MiB  # 6 layers' outputs, the last 3 freed by the peak (each after its layer's gradient)
GRADIENTS = 4 * 64 * ms.MiB  # one per parameter, all live at the peak
LOSS = 512  # kept by a variable to the next iteration: no block the backward frees or makes


def _read(tmp_path: Path, doc: dict):  # noqa: ANN202 - the host report
    return report(written(tmp_path, ms.Scenario(doc, {})))


@pytest.mark.parametrize("kw", [{}, {"short": 100}, {"teardown": True}, {"recorded_from_loop": True},
                                {"leak": "list"}], ids=["plain", "odd_requests", "torn_down", "from_loop", "leak"])
def test_a_stackless_loops_peak_parts_are_its_constructed_roles(tmp_path: Path, kw: dict):
    sc = ms.training_iterations(**kw)
    rep = _read(tmp_path, ms.as_recorded(sc.doc, context=None))
    m = rep.gpus[0].memory
    held = sc.truth["held"] + (sc.truth["leak"]["bytes_at_peak"] if kw.get("leak") else 0)
    # base: {"held": held, "other": 369,099,264}
    assert m["breakdown"] == {"held": held, "activations": ACTIVATIONS, "gradients": GRADIENTS, "other": LOSS}
    assert sum(m["breakdown"].values()) == m["peak_allocated_bytes"]
    assert memory_unit_problems(rep) == []


def test_the_report_says_the_parts_were_read_from_the_pattern(tmp_path: Path):
    rep = _read(tmp_path, ms.as_recorded(ms.training_iterations().doc, context=None))
    assert PATTERN_PARTS in rep.gpus[0].memory["note"]  # base: ""
    (note,) = [f for f in rep.findings if f.title == "The memory snapshot records no stacks"]
    assert "activations and gradients were read from the same pattern, not from frames (low confidence)" in note.summary


@pytest.mark.parametrize("kw", [{"micro_batches": 2}, {"set_to_none": False}, {"iterations": 5, "layers": 2}],
                         ids=["accumulation", "grads_kept", "step_after_walk"])
def test_what_the_pattern_cannot_tell_stays_other_never_misread(tmp_path: Path, kw: dict):
    """Gradients accumulated over micro-batches or held in place (made before the peak's walk, freed by no
    ``zero_grad()`` inside it), an optimizer's temporary made after the walk: no category holds more than the framed
    history's (its frames are the truth), the activations are all read, the rest is "other"."""
    sc = ms.training_iterations(**kw)
    framed = _read(tmp_path / "framed", sc.doc).gpus[0].memory["breakdown"]
    bare = _read(tmp_path / "bare", ms.as_recorded(sc.doc, context=None)).gpus[0].memory["breakdown"]
    assert bare.get("activations") == framed.get("activations")  # base: none where the framed holds some
    assert all(bare.get(c, 0) <= framed.get(c, 0) for c in bare if c != "other"), (bare, framed)
    assert sum(bare.values()) == sum(framed.values())


@pytest.mark.parametrize("doc", [lambda: ms.inference_loop().doc, lambda: ms.forward_only(grad=False).doc,
                                 lambda: ms.forward_only(grad=True).doc], ids=["inference", "nograd", "graph_kept"])
def test_control_a_stackless_forward_invents_no_gradient(tmp_path: Path, doc):  # noqa: ANN001 - a doc's maker
    """No gradient nor optimizer state; activations only where the forward's kept blocks have a kept graph's shape
    (h37-snap69: then the framed history's own, which the kept-forward finding states), never more than its frames
    give them (an inference loop's input is no activation)."""
    d = doc()
    m = _read(tmp_path / "bare", ms.as_recorded(d, context=None)).gpus[0].memory
    framed = _read(tmp_path / "framed", d).gpus[0].memory["breakdown"]
    assert not {"gradients", "optimizer"} & set(m["breakdown"])
    assert m["breakdown"].get("activations", 0) in (0, framed.get("activations"))
    assert (PATTERN_PARTS in m["note"]) == bool(m["breakdown"].get("activations"))


@pytest.mark.parametrize("form", ["framed", "python"])
def test_control_a_history_with_frames_reads_as_before(tmp_path: Path, form: str):
    sc = ms.training_iterations()
    doc = sc.doc if form == "framed" else ms.as_recorded(sc.doc, stacks="python")
    m = _read(tmp_path, doc).gpus[0].memory
    assert m["breakdown"] == {"held": sc.truth["held"], "activations": ACTIVATIONS, "gradients": GRADIENTS,
                              "other": LOSS}
    assert PATTERN_PARTS not in m["note"]


def test_a_real_adam_loop_with_its_frames_dropped_reads_a_part_of_its_framed_parts(tmp_path: Path):
    """Real: wild ``snapshot_adam_iterations`` (its frames are the truth) recorded so without stacks: each part the
    pattern reads is within the framed reading's (activations 700 of 780 MB, gradients 160,000,000 of 160,000,512 B),
    the rest "other", held the same; its activations finding says how they were read, at low confidence.  Base:
    held and 940 MB "other", no activation finding."""
    import gzip
    import pickle

    src = Path(__file__).parents[1] / "fixtures/wild/snapshot_adam_iterations"
    (path,) = [p for p in src.iterdir() if ".pickle" in p.name]
    doc = pickle.loads(gzip.open(path).read() if path.name.endswith(".gz") else path.read_bytes())
    framed = report(path).gpus[0].memory["breakdown"]
    rep = _read(tmp_path, ms.as_recorded(doc, context=None))
    bare = rep.gpus[0].memory["breakdown"]
    assert bare["held"] == framed["held"] and sum(bare.values()) == sum(framed.values())
    assert 0 < bare["activations"] <= framed["activations"] and 0 < bare["gradients"] <= framed["gradients"]
    (f,) = [f for f in rep.findings if f.rule == "activation_memory"]
    assert f.confidence == "low" and "read from the allocation pattern" in f.summary
    assert memory_unit_problems(rep) == []
