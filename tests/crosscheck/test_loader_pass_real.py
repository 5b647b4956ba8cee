"""One pass of a loop starts where it fetches its input; a GPU still on earlier work was on it since the window opened
(issue #37, survey h37-survey34).

``wild/loader_pass_rtx5070ti`` and ``wild/held_pass_rtx5070ti`` (Livinfly/torchprof-XDU, MIT) are a course's
one-batch inference captures on an RTX 5070 Ti Laptop GPU: ``profile_batch_0`` fetches the batch from a fresh
single-process DataLoader, copies it and runs the forward.  In the ResNet-50 one the fetch holds the GPU idle for 9.4 ms
of a 24.2 ms pass; main read the pass from its first launch (13.3 ms) and said 0.0% input wait.  In the ViT one two
warm-up batches launched without a sync still run on the GPU through the fetch: there the fetch is no wait, and the
GPU's earlier work runs from the window's start, not only from the first recorded launch.
"""

from __future__ import annotations

from tests.support.kineto_doc import kept_events
from tests.support.paths import FIXTURES
from tests.support.run_report import run_report

WILD = FIXTURES / "wild"
FETCH = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"


def _events(run: str) -> list[dict]:
    return kept_events(WILD / run)


def _report(run: str) -> dict:
    return run_report(WILD, run).to_dict()


def _hand(run: str) -> dict:
    """The file read by hand: the fetch, the first device work and its launch call, the end of the GPU work."""
    ev = [e for e in _events(run) if e.get("ph") == "X"]
    (fetch,) = [e for e in ev if e["name"] == FETCH]
    work = sorted((e for e in ev if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")), key=lambda e: e["ts"])
    calls = {e["args"].get("correlation"): e for e in ev if e.get("cat") == "cuda_runtime"}
    first = work[0]
    return {"fetch": fetch, "first": first, "launch": calls[first["args"]["correlation"]],
            "gpu_end": max(e["ts"] + e["dur"] for e in work)}


def test_the_files_own_evidence_the_fetch_before_any_gpu_work():
    for run in ("loader_pass_rtx5070ti", "held_pass_rtx5070ti"):
        x = _hand(run)
        f = x["fetch"]
        assert f["ts"] + f["dur"] <= x["launch"]["ts"] < x["first"]["ts"], run  # fetched, then copied, then ran
    r50, vit = _hand("loader_pass_rtx5070ti"), _hand("held_pass_rtx5070ti")
    # ResNet-50: its copy starts within a millisecond of its launch (the GPU idle, free); ViT: 11 ms after it
    assert r50["first"]["ts"] - r50["launch"]["ts"] < 1000
    assert vit["first"]["ts"] - vit["launch"]["ts"] > 10_000


def test_one_pass_starts_at_its_input_fetch_so_the_loader_is_the_input_wait():
    x = _hand("loader_pass_rtx5070ti")
    fetch_ms = x["fetch"]["dur"] / 1e3
    pass_ms = (x["gpu_end"] - x["fetch"]["ts"]) / 1e3
    rep = _report("loader_pass_rtx5070ti")
    host = rep["hosts"][0]
    step = host["gpus"][0]["step_ms"]
    assert abs(step - pass_ms) <= 0.02 * pass_ms, (step, pass_ms)
    assert "fetches its input" in host["steps"]["note"], host["steps"]["note"]
    top = rep["findings"][0]
    assert top["rule"] == "input_bound", [f["rule"] for f in rep["findings"]]
    assert abs(top["saving"]["ms_per_step"] - fetch_ms) <= 0.05 * fetch_ms, (top["saving"], fetch_ms)
    # the capture shows the DataLoader in the main process: the fix is its workers, in the words of inference
    assert "num_workers" in (top["actions"][0]["snippet"] or ""), top["actions"][0]


def test_control_a_fetch_while_the_gpu_runs_earlier_work_is_no_input_wait():
    """The ViT pass fetches its batch too, but the GPU runs the warm-up's batches then: the step still starts at the
    fetch, and the time up to its first work is the GPU's earlier work, booked apart, not input or launch wait."""
    x = _hand("held_pass_rtx5070ti")
    earlier_ms = (x["first"]["ts"] - x["fetch"]["ts"]) / 1e3
    rep = _report("held_pass_rtx5070ti")
    rules = {f["rule"]: f for f in rep["findings"]}
    assert "input_bound" not in rules and "launch_bound" not in rules, sorted(rules)
    head = {h["id"]: h for h in rep["hosts"][0]["headline"]}
    assert head["input_wait_share"]["value"] == 0.0, head["input_wait_share"]
    assert any(f["rule"] == "capture_quality" and "earlier work" in f["title"] for f in rep["findings"]), sorted(rules)
    assert earlier_ms > 15


def test_a_gpu_still_on_earlier_work_ran_it_since_the_window_opened():
    """The ViT pass's first work, launched 11 ms before it starts, waited on the warm-up's batches: queues drain in
    order, so the GPU ran that earlier work from the pass's start, through the fetch, not only from the launch
    (main: 10.7 of the 15.5 ms, the rest booked to the host)."""
    x = _hand("held_pass_rtx5070ti")
    earlier_ms = (x["first"]["ts"] - x["fetch"]["ts"]) / 1e3
    rep = _report("held_pass_rtx5070ti")
    before = [f for f in rep["findings"] if f["rule"] == "capture_quality" and "earlier work" in f["title"]]
    assert before, [f["title"] for f in rep["findings"]]
    assert f"for {earlier_ms:.1f} ms of the" in before[0]["summary"], (before[0]["summary"], earlier_ms)


def test_control_a_one_pass_capture_without_an_input_fetch_keeps_its_start():
    """A one-pass capture whose host records no input pipeline (a cold AlexNet forward from process start) is read
    from the op that launches its first kernel, as before: nothing before it is the pass's."""
    rep = _report("cold_a100_alexnet")
    host = rep["hosts"][0]
    assert host["steps"]["source"] == "single_pass", host["steps"]
    assert "fetches its input" not in host["steps"]["note"]
    assert not any(e.get("name", "").startswith("enumerate(DataLoader)") for e in _events("cold_a100_alexnet"))
