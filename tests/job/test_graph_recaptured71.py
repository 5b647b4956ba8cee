"""A graph captured again after the program had replayed it is a recurring cost, not warm-up
(``job.phase.recaptures``, ``rules.graph_recaptured``; h37-recapture71, h37-hunt71b *Left* 2).

pytorch/ao's compiled ViT (``wild/compiled_vit_recapture_a100``: ``torch.compile(mode="max-autotune")``, batch 1,
autograd on, 105 warm-up calls before the profiler) records its CUDA graph again on calls #0, #2 and #4 of the 5
profiled (~210 ms each), replaying it on #1 and #3 (~2.4 ms).  Main 0af60263 booked every capture as one-time and
dropped each step holding one as warm-up: 1 step kept of 5, "4% of the window in one-time costs", a step-gaps warning
on a 2.48 ms step.  A capture met after two graph launches in a row (the program replaying alone) recurs: the steps
holding it are analysed, and a finding says what recording again costs a step and the PyTorch fixes.  Truth by
construction: ``synthetic.torchtrace.Rank.record_graph`` (every other step records again); its control records once,
in the first step, then replays -- one-time, as before.  Each test fails on main (no such finding; the generator's
``record_graph`` is new)."""

from __future__ import annotations

import json
import os

from synthetic import torchtrace as tt
from tests.support.cli_report import in_process

HERE = os.path.dirname(__file__)
VIT = os.path.join(HERE, "..", "fixtures", "wild", "compiled_vit_recapture_a100")
KERNELS = [(tt.GEMM_FWD, 40.0)] * 30


def _host(path: str) -> dict:
    out = in_process("report", path, "--format", "json", "--cache-dir", "off")
    return json.loads(out.stdout)["reports"][0]["hosts"][0]


def _rules(h: dict) -> dict:
    return {f["rule"]: f for f in h["findings"]}


def test_the_real_vit_recording_its_graph_again_is_a_recurring_cost():
    h = _host(VIT)
    f = _rules(h).get("graph_recaptured")
    assert f is not None, [x["rule"] for x in h["findings"]]
    assert f["severity"] == "critical"
    assert f["saving"]["percent_of_step"] > 90
    assert f["summary"].startswith("2 of the 4 steps analysed capture their graph again")
    assert "no backward is pending" in f["summary"]
    assert any("inference_mode" in (a.get("snippet") or "") for a in f["actions"])
    # the recaptured steps are analysed, not dropped as warm-up; the first call's capture may be warm-up
    warm = [d for d in h["steps"]["dropped"] if d["reason"].startswith("warm-up")]
    assert [d["step"] for d in warm] == [0]
    assert "3 warm-up steps" not in h["steps"]["note"]
    assert h["job"]["phase"] != "mixed"


def _generated(tmp_path, every: int) -> dict:
    n = [0]

    def body(r: tt.Rank) -> None:
        k = n[0]
        n[0] += 1
        if k == 0 or (every and k % every == 0):
            r.record_graph(KERNELS)
        else:
            r.graph(KERNELS)
        r.sync()
    paths = tt.write_run(str(tmp_path), tt.Scenario(1, tt._single(body), [], [], "recapture"), steps=10,
                         run=f"every{every}")
    return _host(paths[0])


def test_a_generated_loop_recording_its_graph_every_other_step_is_told(tmp_path):
    h = _generated(tmp_path, 2)
    f = _rules(h).get("graph_recaptured")
    assert f is not None, [x["rule"] for x in h["findings"]]
    assert f["summary"].startswith("4 of the 8 steps analysed")
    # each recording runs ~20 ms of Python + 2 ms of capture + 1 ms instantiation over a replay: half the steps
    assert 9.0 < f["saving"]["ms_per_step"] < 14.0


def test_a_graph_recorded_once_then_replayed_stays_one_time(tmp_path):
    """Control: the first step records, every later one replays -- the capture is one-time, as on main."""
    h = _generated(tmp_path, 0)
    assert "graph_recaptured" not in _rules(h)
    assert "1 graph capture" in h["job"]["phase_evidence"]
