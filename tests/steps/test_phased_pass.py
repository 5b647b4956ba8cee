"""GPU bursts that share no work are the phases of one pass, not steps (survey h37-survey10).

The real cases (``tests/fixtures/wild/SURVEY.md``, "Survey h37-survey10"): Zeffar/2048 ``profile_report.sqlite`` (MIT,
kept as ``wild/mcts_rtx3080_one_pass``: an RTX 3080 Monte-Carlo tree search, a 64 B upload, ``init_rng`` 1.8 ms, then
``simulate_random_play_kernel`` 110 ms, once) and nPr0nn/Luminara-Raytracing ``profile_report.sqlite`` (a ray
tracer's world build, its one 1.6 s render, its teardown).  Main 842ab24 cut each into two "steps" of GPU bursts (58 ms
and 816 ms); h37-paced's rule (bursts are steps only where their work repeats) makes each one pass, which these tests
hold on the real capture and by construction.

By construction (``synthetic.nsysexport.write_phased_pass``): one pass of two phases is one step; the same program run
three times repeats its kernels, and its bursts stay steps (the control).
"""

from __future__ import annotations

import pytest

from synthetic import nsysexport as nx
from tests.support.cli_report import first_host
from tests.support.paths import FIXTURES


def test_bursts_sharing_no_kernel_are_one_pass(tmp_path) -> None:  # noqa: ANN001 - pytest's
    """A set-up kernel, the host's work, then the run: two bursts with nothing in common, one step of the pass."""
    path = str(tmp_path / "profile_report.sqlite")
    truth = nx.write_phased_pass(path)
    steps = first_host(path)["steps"]
    assert steps["source"] != "gpu_busy_clusters"
    assert steps["count"] == truth["passes"] == 1


def test_bursts_repeating_their_kernels_stay_steps(tmp_path) -> None:  # noqa: ANN001 - pytest's
    """Control: the same program three times runs each kernel in several bursts: the bursts are repeated work."""
    path = str(tmp_path / "three.sqlite")
    nx.write_phased_pass(path, passes=3)
    steps = first_host(path)["steps"]
    assert steps["source"] == "gpu_busy_clusters"
    assert steps["count"] >= 3


def test_the_bursts_note_names_no_other_framework_s_markers(tmp_path) -> None:  # noqa: ANN001 - pytest's
    """Words: an Nsight capture's bursts are not said to lack Keras' or TensorFlow's step markers."""
    path = str(tmp_path / "three.sqlite")
    nx.write_phased_pass(path, passes=3)
    note = first_host(path)["steps"]["note"]
    assert note.startswith("no step markers found") and "Profiled batch" not in note


def test_the_real_one_pass_program_is_one_step_of_its_gpu_work() -> None:
    """The kept capture: one step, the pass's 111.8 ms of GPU work (first kernel's start to the last one's end) and
    its copies, not two bursts averaged into 58 ms."""
    host = first_host(str(FIXTURES / "wild" / "mcts_rtx3080_one_pass" / "profile_report.sqlite"))
    assert host["steps"]["count"] == 1
    assert host["gpus"][0]["step_ms"] == pytest.approx(111.8, rel=0.1)
