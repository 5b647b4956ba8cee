"""A first forward that runs out of memory, recorded ``context="state"``: the OOM's numbers hold by accounting and its
words fit a forward whose backward never ran (issue #37 class 5, deliverable 5; session 71 snap71, snap70's *Left* 2).

``synthetic.memsnapshot.oom_first_forward`` writes one history for a training step's first forward and a forward run
for its output alone (truth: the kind is not in the file).  With stacks on its entries the OOM finding names both
readings ("whether a backward would follow is not known ... inference mode frees about 11.8 GiB").  Recorded
``context="state"`` (the blocks keep their stacks, the entries none), base ea5a2537 read the peak's forward tensors
from the climb to the peak -- one block, the history never falling back -- so the same OOM said only "What frees the
most: the forward pass's activations, about 8.40 GiB" (checkpointing's share, a training fix) "called from ?".  Now
the blocks live at the dump, which are the peak's, say what the forward kept: the words are the framed reading's.

Accounting (a part never exceeds its whole): each saving stated <= the activations live at the OOM <= the bytes
allocated then <= the bytes reserved; inference mode frees no more than the forward's tensors, and at least what
they are above the same forward's peak under no_grad (``nograd_peak_bytes``, by construction)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tests.support.cli_report import cli_report

GiB = 1 << 30


def _oom(tmp_path: Path, doc: dict) -> dict:
    report = cli_report(ms.write(str(tmp_path / "run" / "snapshot.pickle"), doc))
    (f,) = [f for f in report["hosts"][0]["findings"] if f["rule"] == "oom_snapshot"]
    return f


def _gib(text: str, after: str) -> float:
    """The GiB figure that follows ``after`` in ``text``."""
    got = re.search(re.escape(after) + r" ([0-9.]+) GiB", text)
    assert got, (after, text)
    return float(got.group(1))


@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("temporaries", [False, True])
def test_a_state_recorded_first_forward_oom_says_what_the_framed_one_says(tmp_path: Path, train: bool,
                                                                         temporaries: bool):
    s = ms.oom_first_forward(train=train, temporaries=temporaries)
    framed = _oom(tmp_path / "framed", s.doc)
    state = _oom(tmp_path / "state", ms.as_recorded(s.doc, context="state"))
    text = state["summary"]
    assert "called from ?" not in text
    assert "whether a backward would follow is not known" in text
    # the same words as with stacks, from the live allocations on (the place asked from is not in a stateless entry)
    tail = text[text.index("The largest live allocations then"):]
    assert tail == framed["summary"][framed["summary"].index("The largest live allocations then"):]
    assert state["saving_bytes"] == framed["saving_bytes"]
    # accounting: a part never exceeds its whole
    d = state["metric"]["detail"]
    acts = _gib(text, "the forward pass's activations")
    allocated, reserved = d["allocated_bytes"] / GiB, d["reserved_bytes"] / GiB
    unmode = _gib(text, "inference mode (or no_grad) frees about")
    assert state["saving_bytes"] / GiB <= acts <= allocated <= reserved
    assert unmode <= acts
    assert abs(acts - s.truth["graph_bytes"] / GiB) < 0.01
    assert unmode >= (s.truth["graph_bytes"] - s.truth["nograd_peak_bytes"]) / GiB


def test_a_training_oom_recorded_state_only_keeps_its_training_words(tmp_path: Path):
    """Control (passes on base): a training OOM (Adam's state at the dump) is no unknown forward."""
    text = _oom(tmp_path, ms.as_recorded(ms.oom_activations().doc, context="state"))["summary"]
    assert "whether a backward would follow" not in text
