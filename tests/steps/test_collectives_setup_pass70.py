"""One pass of a program that sets up NCCL and runs its collectives once: its set-up's bursts of fills and copies are
no iterations, and pinned buffers taken once are no churn (hunt70b, issue #37 deliverable 6).

The real capture (``wild/nccl_setup_v100x4_nvprof``, blinkplus-nccl-base's nvprof ``output.nvvp``, BSD-3; read by hand
with ``sqlite3`` first): 4 V100s in one process, four groups' buffers filled, four ``ncclCommInitAll`` (36
``cudaHostAlloc``, 40 GPU bursts of ``cudaMemset`` fills and 120-byte uploads), then 12 broadcasts and 12 all-reduces
in one burst at 10.59-10.75 s, every buffer freed at exit.  Base dbf6cf15 read 35 "steps" of 21.9 ms (the set-up's
fill bursts, repeating by name, taken for a loop of copies), allocator churn of 19.9 ms "per step" and step gaps.

Three causes, each general:

- ``steps.burst_steps._one_off_bursts`` judged the bursts holding one-time costs by their kernels alone
  (``KIND_KERNEL``): a program whose only compute is collectives (``KIND_COLLECTIVE``) showed none, so its one burst
  of collectives after the set-up was never seen as work run once.  Kernels and collectives are the program's compute
  alike (``BurstTable.work``, which every other reading of the bursts asks).
- ``_one_off_bursts`` also set aside a window whose every burst holds one-time costs (the uploads before the first
  kernel are the start-up's), so the same pass with plain kernels stayed 5 "steps"; now it is judged alike.
- ``metrics.capture.alloc_calls`` counted any allocation after any free as memory "given back and asked for again":
  the context's first ``cudaFree`` (2.79 s) before the communicators' pins made the start-up's 36 pins "churn" in one
  pass.  Now an allocation counts only after a free of its own kind (pinned host or device memory), and the rule asks
  the kind it blames (``rules.allocator_churn._asked_again``).

By construction (``synthetic.nsysexport.write_collectives_setup_pass``, an Nsight export of the same shape) and on the
real file.  Each test but the controls fails on dbf6cf15.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic.nsysexport import write_collectives_setup_pass
from tests.support.cli_report import first_host

KEPT = Path(__file__).resolve().parents[1] / "fixtures" / "wild" / "nccl_setup_v100x4_nvprof"


def _rules(host: dict) -> dict[str, dict]:
    return {f["id"].split(":")[0]: f for f in host["findings"]}


@pytest.fixture(scope="module")
def real() -> dict:
    return first_host(KEPT)


def test_the_nccl_demo_is_one_pass_not_its_set_up_bursts(real):
    """The 40 set-up bursts and the burst of collectives are one pass (base: ``gpu_busy_clusters``, 35 steps of
    21.9 ms, the collectives' burst dropped as the partial last)."""
    steps = real["steps"]
    assert steps["source"] == "whole_capture" and steps["count"] == 1, (steps["source"], steps["count"])
    assert "no later burst runs again" in steps["note"], steps["note"]


def test_the_nccl_demo_counts_every_collective_in_its_pass(real):
    """By hand: 8, 8, 4 and 4 collective kernels on GPUs 0-3 (groups 01, 021, 031, 0321), all in the pass (base:
    every GPU's collectives per step 0 -- they ran in the dropped last "step")."""
    per_gpu = {g["gpu"]: g["collective_calls_per_step"] for g in real["gpus"]}
    assert per_gpu == {0: 8, 1: 8, 2: 4, 3: 4}, per_gpu


def test_the_nccl_demo_s_pins_are_its_start_up_not_churn(real):
    """Every ``cudaFreeHost`` comes at exit, after the last ``cudaHostAlloc``: no pinned buffer is given back and
    taken again, so no allocator churn (base: "The device allocator runs inside every step", 19.9 ms a step); the
    cold start leads, critical."""
    rules = _rules(real)
    assert "allocator_churn" not in rules and "step_gaps" not in rules, sorted(rules)
    assert rules["cold_start"]["severity"] == "critical", rules["cold_start"]["severity"]


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> dict[str, tuple[dict, dict]]:
    out = {}
    for name, kw in {"collectives": {}, "kernels": {"collectives": False}, "repin": {"repin": True}}.items():
        path = tmp_path_factory.mktemp(name) / "run.sqlite"
        truth = write_collectives_setup_pass(str(path), **kw)
        out[name] = (first_host(path), truth)
    return out


@pytest.mark.parametrize("case", ["collectives", "kernels"])
def test_a_set_up_then_one_burst_of_compute_is_one_pass(written, case):
    """By construction: 6 set-up rounds of fills and uploads, then 6 collectives (or plain kernels) in one burst, the
    first launch loading its module.  Base: 4 "steps" of 163.2 ms (5 of 139.7 ms with plain kernels), each a set-up
    round.  Every burst holds one-time costs (the uploads before the first kernel or collective are the start-up's,
    ``job.phase`` says), which ``_one_off_bursts`` set aside as "no steady burst to compare"; all the compute runs
    in one burst, the others copies and fills alone: the set-up, then the work once (``_start_up_alone``)."""
    host, truth = written[case]
    assert host["steps"]["count"] == 1 and host["steps"]["source"] == "whole_capture", host["steps"]
    assert "then its work run once, not a loop" in host["steps"]["note"], host["steps"]["note"]
    assert truth["kernels"] == 6


@pytest.mark.parametrize("case", ["collectives", "kernels"])
def test_pinned_buffers_taken_once_after_the_context_s_free_are_no_churn(written, case):
    """The same pass: a ``cudaFree`` first (the context), then 6 pins kept to the end -- no allocator churn (base:
    "Pinned host memory is allocated and freed inside every step"; with only the burst reading mended, "... inside
    the pass", critical)."""
    host, _ = written[case]
    assert "allocator_churn" not in _rules(host), sorted(_rules(host))


def test_control_pinned_memory_given_back_and_taken_again_in_one_pass_is_churn(written):
    """Control: each round after the first frees the last round's pinned buffer before pinning its own -- pinned
    memory given back and asked for again, churn even in one pass (on base too, as "inside every step")."""
    host, _ = written["repin"]
    churn = _rules(host).get("allocator_churn")
    assert churn is not None and churn["title"].startswith("Pinned host memory is allocated and freed"), \
        sorted(_rules(host))


def test_the_nccl_demo_s_gpus_in_turn_are_said_of_its_pass(real):
    """Its 4 GPUs' set-up runs device by device: the sequential-GPUs note speaks of the pass the capture is, not of a
    step it does not hold (the one-pass-words law of ``tests/report/test_properties.py``; base: "GPUs run the step one
    after another" of its 35 guessed steps)."""
    f = _rules(real)["sequential_gpus"]
    assert f["title"] == "GPUs run the pass one after another", f["title"]
    assert "the step" not in f["summary"] and "the step" not in f["saving"]["assumption"], f["summary"]


def test_the_nccl_demo_s_uploads_before_its_first_collective_are_its_start_up(real):
    """By hand: 124 uploads (38/38/24/24 per GPU, 8 B to 1 KB: the buffers' and communicators' device structs), all
    before each GPU's first collective -- the set-up's (``job.phase._first_uploads`` asked for a first *kernel* and
    found none on a GPU that runs collectives only; base: no copy named among the one-time costs); the words name the
    first compute a collective, as it is (h37-jaxunrec70; main after hunt70b: "before the first kernel")."""
    said = _rules(real)["cold_start"]["summary"]
    assert "124 copies to the device before the first collective" in said and "first kernel" not in said, said
