"""A forward that freed as it went and kept nothing reads as forward passes from its allocation pattern alone, when no
frame (C++ or Python) says what allocated (issue #37 class 5, deliverable 5; session 71 snap71).

Base ea5a2537 read a single no-grad forward recorded without stacks "unknown": its peak held fewer blocks than a
backward's walk needs (``_dropped_forward``) and one pass repeats nothing (``_repeated_passes``).  Its pattern is none
of a training step's parts: from the level the history ends at, the level climbs a little and falls back, never
holding more than a few of the many blocks it makes (no graph kept for a backward), and nothing it made is live at
the dump (no gradient held, no optimizer state made).  ``job.kind._freed_as_it_went`` reads it: inference, low.

Truth: the kept ``wild/snapshot_inference_gpt`` (Wedsonlin's CS336 GPT-2 medium forward under ``inference_mode``,
MIT, PROVENANCE.md) and ``wild/snapshot_inference_after_warmup`` with their frames taken away
(``synthetic.memsnapshot.as_recorded(context=None)``: what ``_record_memory_history(context=None)`` writes), and
``synthetic.memsnapshot.forward_only(grad=False, passes=1)`` by construction (96 layers: the generator makes 4
allocations a layer, a real block 40-60).  Controls (pass on base): single training steps of small models and a
forward kept with autograd on are never read so."""

from __future__ import annotations

import gzip
import pickle
from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tests.support.cli_report import cli_report
from tests.support.paths import FIXTURES

WORDS = "freed each layer's tensors as it went"


def _job(tmp_path: Path, doc: dict) -> dict:
    return cli_report(ms.write(str(tmp_path / "run" / "snapshot.pickle"), doc))["hosts"][0]["job"]


def _real(name: str) -> dict:
    (path,) = [p for p in (FIXTURES / "wild" / name).iterdir() if p.name.endswith((".pickle", ".pickle.gz"))]
    with (gzip.open if path.suffix == ".gz" else open)(path, "rb") as f:
        return pickle.load(f)


@pytest.mark.parametrize("name", ["snapshot_inference_gpt", "snapshot_inference_after_warmup"])
@pytest.mark.parametrize("context", [None, "state"])
def test_a_real_no_grad_forward_without_stacks_is_forward_passes(tmp_path: Path, name: str, context: str | None):
    job = _job(tmp_path, ms.as_recorded(_real(name), context=context))
    assert job["kind"] == "inference", job["kind_evidence"]
    assert WORDS in job["kind_evidence"] and "never holds more than" in job["kind_evidence"]


def test_a_no_grad_forward_by_construction_is_forward_passes(tmp_path: Path):
    s = ms.forward_only(grad=False, passes=1, layers=96)
    assert s.truth["kind"] == "inference" and not s.truth["grad"]
    job = _job(tmp_path, ms.as_recorded(s.doc, context=None))
    assert job["kind"] == "inference" and WORDS in job["kind_evidence"], job["kind_evidence"]


@pytest.mark.parametrize("layers,params", [(1, 1), (2, 2), (3, 4), (6, 4), (12, 2)])
def test_one_training_step_without_stacks_is_never_read_so(tmp_path: Path, layers: int, params: int):
    """Control (passes on base): the step's backward keeps gradients and its optimizer makes state -- held at the
    dump -- and its forward holds what it made for the backward."""
    doc = ms.as_recorded(ms.training_iterations(iterations=1, layers=layers, params=params).doc, context=None)
    job = _job(tmp_path, doc)
    assert job["kind"] != "inference" and WORDS not in job["kind_evidence"]


def test_a_forward_kept_with_autograd_on_is_not_read_so(tmp_path: Path):
    """Control (passes on base): a pass with autograd on holds every layer's tensors -- no forward that freed as it
    went (its dropped graph says forward passes by another reading)."""
    job = _job(tmp_path, ms.as_recorded(ms.forward_only(grad=True, passes=1, layers=96).doc, context=None))
    assert WORDS not in job["kind_evidence"]
