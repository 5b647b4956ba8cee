"""A Python launcher's own time before the kernels it starts through the driver (issue #37 class 3, h37-driverlaunch).

A Triton kernel called outside ``torch.compile`` is launched by ``cuLaunchKernel`` (``hipModuleLaunchKernel`` on
ROCm) with no ATen op or range around it, after tens of microseconds of Triton's Python launcher that the profiler
records nothing of (survey h37-survey44: an A10G microbenchmark, ~400 us of the 1.21 ms the report called
unrecorded).  The unrecorded-idle finding names that part of its time, from the step ledger's own ``other``, and
how to cut it.  Truth by construction: ``synthetic.torchtrace.write_python_launcher``'s launcher time and launches.
Controls: the same silences before launches made inside Inductor's ``triton_*`` ops (a compiled function), and
before bare launches through the runtime API (not a launcher of a run-time compiled kernel): nothing is named.

Between steps (h37-launcher2): where the launches open each step, the first one's launcher time lies in the gap
before it, and the gaps' check names that part of its unrecorded time from the same measure (a part of the
launcher's whole, of the gaps' unrecorded time), with the same fix."""

from __future__ import annotations

import pytest

from synthetic.torchtrace import MI300X, write_python_launcher
from tests.support.cli_report import first_report

WORDS = "launched straight through the driver"
#: The same silences before launches no Python launcher makes: inside Inductor ops, through the runtime API, or
#: bare driver launches after a C++ launcher's silence; or inside the program's own range, after an op inside it
#: returned (``model.enclosing.Encloser(nested=True)``, h37-probe47y: BASE read those launches as outside every range).
CONTROLS = [{"compiled": True}, {"call": "cudaLaunchKernel"}, {"launcher_us": 2.0, "between_us": 600.0},
            {"ranged": True}]
CONTROL_IDS = ["compiled_op", "runtime_call", "compiled_launcher", "ranged_after_inner_op"]


def _unrecorded(tmp_path, **kw) -> tuple[dict, dict, dict]:
    """(the unrecorded-idle finding, the host's report, the generator's truth) of one generated capture."""
    f, report, truth = _finding(tmp_path, "#unrecorded", **kw)
    return f, report["hosts"][0], truth


def _finding(tmp_path, suffix: str, **kw) -> tuple[dict, dict, dict]:
    """(the finding whose id ends in ``suffix``, the report, the generator's truth) of one generated capture."""
    run = tmp_path / "run"
    run.mkdir()
    truth = write_python_launcher(str(run / "bench.pt.trace.json"), **kw)
    report = first_report(run)
    (f,) = [f for f in report["findings"] if f["id"].endswith(suffix)]
    return f, report, truth


@pytest.mark.parametrize("kw", [{}, {"marked": False}, {"launches": 6, "launcher_us": 25.0}],
                         ids=["steps", "one_pass", "six_launches"])
def test_launcher_time_is_named_as_part_of_the_unrecorded_time(tmp_path, kw):
    """The launcher's time a step, and its launches, are the generator's; a part of the finding's unrecorded time,
    itself the ledger's ``other``; the words say whose time it is, and the fix how to cut it."""
    f, host, truth = _unrecorded(tmp_path, **kw)
    detail = f["metric"]["detail"]
    assert detail["launcher_ms"] == pytest.approx(truth["bare_ms_per_step"], abs=1e-3)
    assert detail["launcher_launches_per_step"] == truth["bare_launches_per_step"]
    assert detail["launcher_ms"] < detail["unrecorded_ms"] <= host["breakdown_ms"]["other"] + 1e-6  # part < whole
    assert WORDS in f["summary"] and "Triton" in f["summary"]
    assert any("Python launcher" in a["text"] and "torch.compile" in (a["snippet"] or "") for a in f["actions"])


@pytest.mark.parametrize("suffix,key,kw", [("#unrecorded", "bare_ms_per_step", {}),
                                           ("step_gaps:bench", "gap_launcher_ms_per_step", {"opening": True})],
                         ids=["unrecorded", "gaps"])
def test_launcher_on_rocm_in_hip_words(tmp_path, suffix, key, kw):
    """HIP's ``hipModuleLaunchKernel`` is the same class on an MI300X: named alike, in ROCm's words (a HIP graph, no
    CUDA word in the prose; PyTorch's ``torch.cuda`` code stays as ROCm's PyTorch spells it) -- by the unrecorded-idle
    finding, and by the gaps' check where the launches open each step."""
    f, _, truth = _finding(tmp_path, suffix, call="hipModuleLaunchKernel", props=MI300X, **kw)
    assert f["metric"]["detail"]["launcher_ms"] == pytest.approx(truth[key], abs=1e-3)
    prose = [f["summary"], *(a["text"] for a in f["actions"])]
    assert not [t for t in prose if "CUDA" in t], prose
    assert any("HIP graph" in t for t in prose)


@pytest.mark.parametrize("kw", CONTROLS, ids=CONTROL_IDS)
def test_no_launcher_named_where_the_launch_is_no_bare_driver_launch(tmp_path, kw):
    """Controls: the same unrecorded silences before each launch, but the launch inside its Inductor op (a compiled
    function's), or a bare launch through the runtime API; or bare driver launches each after a silence shorter
    than a Python call (a C++ launcher's: nvFuser's 0.7 us on an H200) -- the unrecorded time is still named, no
    launcher."""
    f, _, _ = _unrecorded(tmp_path, **kw)
    assert "launcher_ms" not in f["metric"]["detail"]
    assert WORDS not in f["summary"]
    assert not any("Python launcher" in a["text"] for a in f["actions"])


@pytest.mark.parametrize("kw", [{}, {"launches": 6, "launcher_us": 25.0}, {"between_us": 200.0}],
                         ids=["steps", "six_launches", "long_python"])
def test_launcher_time_in_the_gaps_is_named_by_the_gap_check(tmp_path, kw):
    """The launches open each step: the first one's launcher time a step lies in the gap before it (the
    generator's ``gap_launcher_ms_per_step``, one launch a step), and the gaps' check names it as a part of the
    gap's unrecorded time, never above it nor above the launcher's whole (the unrecorded-idle finding's), with the
    launcher's fix after the way to record the host."""
    f, report, truth = _finding(tmp_path, "step_gaps:bench", opening=True, **kw)
    detail = f["metric"]["detail"]
    assert detail["launcher_ms"] == pytest.approx(truth["gap_launcher_ms_per_step"], abs=1e-3)
    assert detail["launcher_launches_per_step"] == truth["gap_launches_per_step"]
    assert detail["launcher_ms"] <= detail["unexplained_ms"] + 1e-6  # a part of the gaps' unrecorded time
    (whole,) = [x for x in report["findings"] if x["id"].endswith("#unrecorded")]
    assert detail["launcher_ms"] <= whole["metric"]["detail"]["launcher_ms"] + 1e-6  # a part of the launcher's time
    assert WORDS in f["summary"] and "Triton" in f["summary"]
    texts = [a["text"] for a in f["actions"]]
    at = next(i for i, t in enumerate(texts) if "Python launcher" in t)
    assert at > 0 and texts[at - 1].startswith("Record"), texts


@pytest.mark.parametrize("kw", CONTROLS, ids=CONTROL_IDS)
def test_no_launcher_named_in_the_gaps_where_no_bare_driver_launch(tmp_path, kw):
    """Controls: the same gaps, opened by launches inside Inductor ops, bare runtime-API launches, or bare driver
    launches after a C++ launcher's silence: the gaps' check fires on its unrecorded time, no launcher named."""
    f, _, _ = _finding(tmp_path, "step_gaps:bench", opening=True, **kw)
    assert "launcher_ms" not in f["metric"]["detail"]
    assert WORDS not in f["summary"]
    assert not any("Python launcher" in a["text"] for a in f["actions"])


@pytest.mark.parametrize("kw", [{}, {"opening": True}, {"opening": True, "call": "hipModuleLaunchKernel",
                                                         "props": MI300X}], ids=["in_step", "opening", "opening_rocm"])
def test_launcher_reports_hold_every_property(tmp_path, kw):
    """The report properties (tests/support/properties.py; ``launcher<=unrecorded`` among them: the launcher's part
    within each finding's unrecorded whole, the gaps' within the launcher's) on the launcher captures, which the
    walk of tests/report/test_properties.py does not hold."""
    from tb_gpu_advisor.discover.logdir import discover
    from tests.support.report_store import session_report
    from tests.support.properties import launcher_part_problems, report_violations

    write_python_launcher(str(tmp_path / "bench.pt.trace.json"), **kw)
    (s,) = discover(str(tmp_path))
    rep = session_report(s)
    assert any((f.metric.detail or {}).get("launcher_ms") for f in rep.hosts[0].findings if f.metric)
    assert report_violations(rep) == []
    if kw.get("opening"):  # the law can fail: a gaps' launcher time over its own unrecorded whole is found
        (gaps,) = [f for f in rep.hosts[0].findings if f.rule == "step_gaps"]
        gaps.metric.detail["launcher_ms"] = gaps.metric.detail["unexplained_ms"] * 2
        assert launcher_part_problems("h", rep.hosts[0])
