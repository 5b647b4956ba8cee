"""The host-bound finding says in which recorded Python call the host's own time lies (issue #37 class 3: each wait
belongs to its cause).

Survey h37-survey62: a vLLM V1 decode (Llama, TP 4, piecewise HIP graphs) on an MI300X, profiled with ``with_stack``
(hyukjlee/traceMap, unlicensed: read, not kept).  The GPU ran 14.0 ms of a 45.6 ms step; the finding said the GPU
waits 26.6 ms "while the host runs its own code" and the engine's fix named its scheduler and sampler.  Read by hand,
25.8 ms of that lay inside the model's compiled call (``llama.py(374): forward``) before its first graph launch,
1,207 recorded dict lookups ~22 us apart (the compiled code's guard checks) -- none of it scheduling.  The wrong
assumption: *a host-bound step's time is nowhere in particular* -- where Python was traced, each instant of host
work lies inside every call enclosing it, so the deepest call holding most of it is its place.

Truth by construction (``synthetic.torchtrace.serving_in_model_call``): ``SERVE_HOST_US`` of host work a step inside
``MODEL_FORWARD``; the controls ``serving`` (its ~9 ms between engine steps) and ``serving_ranges`` (no Python
recorded) name none.
The real trace: the kept xDiT SD 3.5 denoising pass (``wild/xdit_sd35_mi300x_denoise``), host-bound by its Inductor
wrapper's Python launching ~1,100 kernels -- that wrapper's ``call`` is where the time lies.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.runtime.pipeline import analyze_session

WILD = Path(__file__).resolve().parents[1] / "fixtures" / "wild"


def _host(tmp_path, body, steps: int = 10) -> dict:
    scenario = tt.Scenario(1, body, [], [], "a vLLM TP worker")
    paths = tt.write_run(str(tmp_path), scenario, steps=steps, run="run")
    hosts = [SimpleNamespace(host=f"h{i}", path=p, format="kineto", size=0) for i, p in enumerate(paths)]
    return analyze_session("run", "s", hosts).to_dict()["hosts"][0]


def _host_bound(host: dict) -> dict:
    (f,) = [f for f in host["findings"] if f["title"].startswith("Host-bound")]
    return f


def _place(summary: str) -> tuple[str, float] | None:
    """(call, ms) the summary names as where the host's own work lies, or None."""
    import re

    m = re.search(r"; ([\d.]+) ms of this time lies inside the Python call `([^`]+)`", summary)
    return (m.group(2), float(m.group(1))) if m else None


def test_the_time_inside_the_model_s_call_is_placed_there(tmp_path):
    host = _host(tmp_path, tt.serving_in_model_call)
    f = _host_bound(host)
    place = _place(f["summary"])
    assert place is not None, f["summary"]  # main: no place named
    call, held = place
    assert call == tt.MODEL_FORWARD  # not execute_model around it, nor a guard lookup inside it
    assert held == pytest.approx(tt.SERVE_HOST_US / 1000.0, abs=0.1)
    assert held <= f["saving"]["ms_per_step"] + 0.05  # a part of the finding's time, never more


@pytest.mark.parametrize("body", [tt.serving, tt.serving_ranges])
def test_control_no_host_bound_step_names_no_call(tmp_path, body):
    """``serving``'s host time lies between its engine steps (the gaps' finding's), ``serving_ranges`` records no
    Python: no finding names a call."""
    host = _host(tmp_path, body)
    assert not any(f["title"].startswith("Host-bound") for f in host["findings"])
    assert not any("lies inside the Python call" in f["summary"] for f in host["findings"])


def test_a_real_compiled_pass_s_host_time_lies_in_its_wrapper_s_call():
    path = next((WILD / "xdit_sd35_mi300x_denoise").glob("*.pt.trace.json.gz"))
    host = analyze_session("run", "s", [SimpleNamespace(host="h", path=str(path), format="kineto", size=0)]
                           ).to_dict()["hosts"][0]
    f = _host_bound(host)
    place = _place(f["summary"])
    assert place is not None, f["summary"]  # main: no place named
    call, held = place
    # the Inductor wrapper's generated `call` launches the pass's ~1,100 kernels from Python
    assert call.startswith("/tmp/torchinductor_") and call.endswith(": call"), call
    assert 0.5 * f["saving"]["ms_per_step"] <= held <= f["saving"]["ms_per_step"] * 1.001
