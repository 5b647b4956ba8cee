"""A capture that does not say whether TensorFlow or JAX wrote it is told each writer's fixes as whose they are, windows
with GPU work included, and a GPU the file does not name is listed as of unknown model (issue #37 class 1,
h37-words63).

Truth by construction: ``synthetic.jaxcapture``'s JAX jobs printed as their trace viewer JSON
(``tfcapture.write_trace_viewer_json``, the layout both writers' profilers print), then stripped of every mark of JAX
-- the dispatch events (``PjitFunction(...)``) and the ``jit_`` module names -- as a JSON whose host threads were
trimmed keeps it.  On base (908b90cb) such a window with GPU work was told Keras's mixed precision policy, Keras's
``steps_per_execution`` and ``TF_GPU_THREAD_MODE`` alone, unheaded (``frameworks.UNKNOWN`` kept TensorFlow's fixes for
every check but the windows without GPU work), and a GPU plane of that JSON, which keeps no device stat, was listed as
"GPU" ("TensorFlow or JAX saw the GPU -- the capture lists GPU --").
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from synthetic import jaxcapture as jc
from tests.support.viewer_json import json_report as _report
from tests.support.viewer_json import viewer_json_run as _json_run

#: what only one writer's fixes name: TensorFlow's Keras and tf.* APIs, JAX's jax.* / jnp APIs
_TF_ONLY = re.compile(r"\btf\.|Keras|TF_GPU_THREAD_MODE|steps_per_execution")
_JAX_ONLY = re.compile(r"\bjax\.|\bjnp\.|\bjmp\b|XLA_FLAGS")
_HEAD = re.compile(r"^If (TensorFlow|JAX) wrote the capture: ")


def _fixes(rep: dict) -> list[tuple[str, str]]:
    """(rule, text + code) of every fix of the report."""
    return [(f["rule"], a["text"] + "\n" + (a.get("snippet") or "")) for f in rep["findings"] for a in f["actions"]]


@pytest.mark.parametrize("scenario", ["jax_raw", "jax_fp32_highest"])
def test_an_unknown_writers_window_with_gpu_work_names_whose_each_fix_is(tmp_path: Path, scenario: str) -> None:
    """Every fix naming one writer's API is headed by that writer; JAX's own fixes are there beside TensorFlow's."""
    (xplane,) = getattr(jc, scenario)().write(tmp_path / "x", scenario)
    rep = _report(_json_run(tmp_path, xplane, anonymous=True))
    (host,) = rep["hosts"]
    assert host["error"] is None and any(g["kernel_count"] for g in host["gpus"])  # a window with GPU work
    fixes = _fixes(rep)
    assert fixes
    for rule, fix in fixes:
        head = _HEAD.match(fix)
        if _TF_ONLY.search(fix):
            assert head and head.group(1) == "TensorFlow", (rule, fix[:160])
        if _JAX_ONLY.search(fix):
            assert head and head.group(1) == "JAX", (rule, fix[:160])
    judged = {rule for rule, _ in fixes if rule != "capture_quality"}
    assert any(_HEAD.match(f) and _HEAD.match(f).group(1) == "JAX" for r, f in fixes if r in judged), fixes


def test_control_the_same_json_with_jaxs_marks_is_told_jaxs_fixes_alone(tmp_path: Path) -> None:
    (xplane,) = jc.jax_raw().write(tmp_path / "x", "jax_raw")
    rep = _report(_json_run(tmp_path, xplane, anonymous=False))
    assert not any(_HEAD.match(f) or _TF_ONLY.search(f) for _, f in _fixes(rep)), _fixes(rep)


def test_a_gpu_the_json_does_not_name_is_listed_as_of_unknown_model(tmp_path: Path) -> None:
    """A host-only window's JSON: its GPU plane keeps no device stat -- listed "GPU of unknown model", no vendor
    claimed of it (base: "the capture lists GPU --", "(GPU)")."""
    truth = jc.write_host_only_window(tmp_path / "x", "xplane_run", fetch=None)
    rep = _report(_json_run(tmp_path, truth["path"], anonymous=False))
    (host,) = rep["hosts"]
    assert host["job"]["gpus_listed"] == "GPU of unknown model"
    assert host["capture"].get("vendor") in (None, "unknown")  # no vendor claimed (``unknown`` since h37-vendor66)
    (f,) = [f for f in rep["findings"] if f["rule"] == "capture_quality" and f["severity"] == "warning"]
    assert "the capture lists GPU of unknown model --" in f["summary"], f["summary"]
    assert "(GPU of unknown model)" in host["job"]["kind_evidence"]
