"""A capture of one training step whose only mark is the program's own ``record_function`` range (h37-wild55k).

Real case (read locally, not kept: no licence): ykcai-daniel/torch-compile-moe @3f88d3dc, ``log_before/rank{0,1}`` and
``log_after/rank{0,1}`` -- a 2-rank MoE of AOT-compiled experts with all-to-all on two A100-SXM4-40GB, each rank's
file ``with profile(...): with record_function("moe_train_step"): ...; prof.step()`` with no schedule, so no
``ProfilerStep#N``: one step, 4.0-21.3 ms on the host.  BASE (ffba6272) read no step mark -- the name
``moe_train_step`` was no step name (a model's word before ``train_step``), and a step-named range met once on its
thread was "no loop's turns" -- and took the GPU's bursts for steps: 5 of the 8 files 2-3 steps of 2.8-9.9 ms
("no step markers found (low confidence)"), the three others the whole capture as one unmarked pass.  Now each is
1 step, ``record_function ranges `moe_train_step`, named like a step``.

By construction (``synthetic.torchtrace.write_one_marked_step``): one training step -- forward burst, the
backward's host start, backward burst, a 12 ms first launch (a module load) -- its ``ProfilerStep#2`` renamed as a
program names its step.  Truth: the ``ProfilerStep#2`` build's reading (1 step, the same findings).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.frameworks import nvtx
from tests.support.cli_report import cli_report


def _report(tmp_path: Path, step_name: str | None, ranks: int = 1) -> dict[str, Any]:
    tt.write_one_marked_step(str(tmp_path), step_name, ranks=ranks)
    return cli_report(tmp_path / "one_marked_step")


@pytest.fixture(scope="module")
def _truth_once(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The ``ProfilerStep#2`` build's report (the truth the one-range reading is held to), made once for the module:
    three tests read the same build (it was written and reported by each)."""
    return json.dumps(_report(tmp_path_factory.mktemp("truth"), None))


@pytest.fixture
def truth(_truth_once: str) -> dict[str, Any]:
    """A copy of its own of :func:`_truth_once` for each test."""
    return json.loads(_truth_once)


def _findings(report: dict[str, Any]) -> list[str]:
    return sorted(f["id"].split(":")[0] for f in report["findings"])


@pytest.mark.parametrize("name", ["moe_train_step", "ddp_train_step", "profile_gpt2_train_step", "3_train_step",
                                  "meta_train_step", "lora_training_step 7"])
def test_a_step_named_after_its_model_is_a_step_name(name: str) -> None:
    """Words before ``train_step`` (the model, the parallelism, a numbered phase) still name a training step."""
    assert nvtx.is_step_name(name)


@pytest.mark.parametrize("name", ["ema_step", "decode_step", "moe_step", "optimizer_train_step", "mytrain_step",
                                  "train_step_fn", "lr_scheduler.step"])
def test_other_steps_stay_no_step_name(name: str) -> None:
    """Control: no word before a bare ``step`` (an EMA's, a decoder's), no optimizer's, no glued word."""
    assert not nvtx.is_step_name(name)


def test_the_profiler_step_reading_is_the_truth(truth: dict[str, Any]) -> None:
    """Control: the ``ProfilerStep#2`` build -- one step, its module load read as a cold start."""
    report = truth
    (host,) = report["hosts"]
    assert host["capture"]["steps_captured"] == 1 and host["steps"]["source"] == "profiler_step"
    assert "cold_start" in _findings(report)


@pytest.mark.parametrize("name", ["moe_train_step", "train_step"])
def test_one_marked_step_reads_as_the_profiler_steps_build(tmp_path: Path, name: str, truth: dict[str, Any]) -> None:
    """The program's one range is the capture's one step, as ``ProfilerStep#2`` is (BASE: "no step markers found",
    the whole capture one unmarked pass, 0 steps captured)."""
    report = _report(tmp_path / "named", name)
    (host,) = report["hosts"]
    assert host["steps"]["source"] == "nvtx_range", host["steps"]
    assert f"`{name}`" in host["steps"]["note"]
    assert host["capture"]["steps_captured"] == host["capture"]["steps_kept"] == 1
    assert _findings(report) == _findings(truth)
    (t_host,) = truth["hosts"]
    assert host["step_rows"][0]["step_ms"] == pytest.approx(t_host["step_rows"][0]["step_ms"], rel=0.02)


def test_each_rank_marks_its_one_step(tmp_path: Path) -> None:
    """Two ranks, each its file and its one ``ddp_train_step``: one step on each GPU."""
    report = _report(tmp_path, "ddp_train_step", ranks=2)
    (host,) = report["hosts"]
    assert host["steps"]["source"] == "nvtx_range"
    assert "(2 on 2 threads)" in host["steps"]["note"]
    assert sorted({r["gpu"] for r in host["step_rows"] if r["gpu"] is not None}) == [0, 1]
    assert {r["step"] for r in host["step_rows"]} == {0}


def test_one_step_range_beside_most_of_the_work_marks_no_steps(tmp_path: Path) -> None:
    """Control (passes on BASE too): a loop of 8 ``ProfilerStep``-less steps of which the program named one
    ``train_step`` -- one range holding an eighth of the launches is no reading of the capture's steps."""
    paths = tt.write_run(str(tmp_path), "healthy_bf16", steps=8, run="one_of_eight")
    for path in paths:
        doc = json.loads(Path(path).read_text())
        for e in doc["traceEvents"]:
            if e.get("name", "").startswith("ProfilerStep#"):
                e["name"] = "train_step" if e["name"] == "ProfilerStep#5" else "loop_body"
        tt.write_doc(path, doc)
    report = cli_report(tmp_path / "one_of_eight")
    (host,) = report["hosts"]
    assert host["steps"]["source"] != "nvtx_range" or "`train_step`" not in host["steps"]["note"]
    assert host["capture"]["steps_captured"] >= 6
