"""h37-review16: kept captures read as their users read them (issue #37; tests/fixtures/wild/SURVEY.md "h37-review16").

* ``order`` -- wild ``d2d_v100`` listed "Too few steps in the capture" (a warning that saves nothing) last, under a
  note saving 2.30 ms, though the notes rest on the four steps it doubts: a warning about the capture is now listed
  right after the last critical or warning finding that saves step time (docs/rules.md, Ranking), so where none
  saves it leads the list, as before (``compiled_a100_triton``).
* ``release-fit`` -- the ``torch.cuda.amp`` precision fix, "(PyTorch 1.8-1.10 spell it torch.cuda.amp)", was keyed to
  the ``legacy`` tag (any release before 2.0): a trace stating PyTorch 1.12 was told it.  ``torch.autocast`` came with
  1.10 (PyTorch's amp docs); 1.10-1.13 are told it, with 2.3's GradScaler spelled ``torch.cuda.amp.GradScaler``.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tb_gpu_advisor import rules
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.model.schema import Finding, Saving
from tests.support.paths import FIXTURES, SHARED_PROFILES
from tests.support.properties import order_problems, release_fit_problems
from tests.support.run_report import run_report
from tests.support.report_store import session_report

_WILD = FIXTURES / "wild"


def _listed(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity != "ok"]


# --------------------------------------------------------------------------- order: a capture warning above the notes


def test_too_few_steps_is_listed_above_the_note_it_doubts():
    """d2d_v100: 4 steps kept of 6; warnings save 36.5, 27.1 and 16.5 ms, a note (small grid) 2.30 ms.  Main listed
    the capture warning fifth, under the note."""
    r = run_report(_WILD, "d2d_v100")
    for where, fs in (("session", r.findings), (r.hosts[0].host, r.hosts[0].findings)):
        listed = _listed(fs)
        cap = next(i for i, f in enumerate(listed) if f.rule == "capture_quality")
        note = next(i for i, f in enumerate(listed) if f.severity == "info" and f.saving)
        assert cap < note, [(f.rule, f.severity) for f in listed]
        assert all(f.saving and f.severity == "warning" for f in listed[:cap])  # below every saving warning
        assert not order_problems(where, fs)


def test_a_note_listed_above_the_capture_warning_is_caught():
    r = run_report(_WILD, "d2d_v100")
    listed = _listed(r.findings)
    cap = next(f for f in listed if f.rule == "capture_quality")
    mains = [f for f in listed if f is not cap] + [cap]  # main's order: the capture warning last
    assert any(v.startswith("order:") for v in order_problems("session", mains))


def _f(fid: str, severity: str, saving_ms: float | None, rule: str | None = None) -> Finding:
    s = Saving(ms_per_step=saving_ms, percent_of_step=saving_ms * 10, assumption="a") if saving_ms else None
    return Finding(id=fid, rule=rule or fid, severity=severity, title=f"T {fid}", summary="s", guide_section="§1",
                   saving=s)


def test_a_note_saving_more_than_a_warning_stays_above_the_capture_warning():
    """Control (issue #36's order): a note that out-saves a warning stays above it and above the capture warning;
    the note saving less than every warning goes below the capture warning."""
    cap = _f("c", "warning", None, rule="capture_quality")
    ranked = rules.rank([cap, _f("n1", "info", 0.4), _f("w", "warning", 1.0), _f("n2", "info", 3.0)])
    assert [f.id for f in ranked] == ["n2", "w", "c", "n1"]
    assert not [v for v in order_problems("h", ranked) if "as ranked" in v]  # the list's order (not the grades')


def test_the_capture_warning_still_leads_where_no_problem_saves_time():
    """Control: compiled_a100_triton (one pass; a note saving 75%) keeps the capture warning first."""
    s = discover(str(_WILD / "compiled_a100_triton"))[0]
    r = session_report(s)
    listed = _listed(r.findings)
    assert (listed[0].rule, listed[0].severity) == ("capture_quality", "warning")
    assert not order_problems("session", r.findings)


# --------------------------------------------------------------------------- release-fit: the fix of the stated release


_OLD_TRACE = SHARED_PROFILES / "wild-torch" / "resnet50_num_workers_0" / "worker0.1623143089861.pt.trace.json.gz"


def _stated(tmp_path: Path, version: str | None):
    """The real 2021 ResNet-50 trace (PyTorch 1.8's schema, a V100), its header stating ``version`` (None: as
    recorded)."""
    if not _OLD_TRACE.is_file():
        pytest.skip("../shared/profiles is not beside this checkout")
    doc = json.loads(gzip.open(_OLD_TRACE).read())
    if version is not None:
        doc["metadata"] = {"torch_env_info": {"torch_version": version}}
    run = tmp_path / "run"
    run.mkdir()
    (run / _OLD_TRACE.name[:-3]).write_text(json.dumps(doc))
    (s,) = discover(str(tmp_path))
    return session_report(s).hosts[0]


def _precision_code(h) -> str:
    return "\n".join(a.snippet or "" for f in h.findings if f.rule in ("mixed_precision_off", "tensor_core_unused")
                     for a in f.actions)


def test_a_trace_stating_1_12_is_told_torch_autocast(tmp_path):
    """Main told PyTorch 1.12 "(PyTorch 1.8-1.10 spell it torch.cuda.amp)" with torch.cuda.amp.autocast()."""
    h = _stated(tmp_path, "1.12.1")
    assert h.job["version"] == "PyTorch 1.12"
    code = _precision_code(h)
    assert "torch.autocast(device_type='cuda', dtype=torch.float16)" in code  # a V100: float16
    assert "scaler = torch.cuda.amp.GradScaler()" in code  # torch.amp.GradScaler('cuda') came with 2.3
    assert "torch.cuda.amp.autocast" not in code
    assert not any("1.8-1.10" in a.text for f in h.findings for a in f.actions)
    assert not release_fit_problems(h.host, h)
    assert any("torch.jit.script" in (a.snippet or "") for f in h.findings for a in f.actions)  # still before 2.0


def test_a_trace_of_the_old_schema_keeps_torch_cuda_amp(tmp_path):
    """Control: as recorded (1.8-1.10's schema: the oldest may predate torch.autocast), torch.cuda.amp's spelling,
    naming no release as the trace's."""
    h = _stated(tmp_path, None)
    assert h.job["version"] == "PyTorch 1.8-1.10"
    code = _precision_code(h)
    assert "with torch.cuda.amp.autocast():" in code and "torch.autocast(" not in code
    assert not release_fit_problems(h.host, h)


def test_a_fix_spelled_for_other_releases_is_caught(tmp_path):
    h = _stated(tmp_path, "1.12.1")
    f = next(f for f in h.findings if f.rule == "mixed_precision_off")
    f.actions[0].snippet = "with torch.cuda.amp.autocast():\n    loss = loss_fn(model(x), y)"  # main's code
    assert any(v.startswith("release-fit") for v in release_fit_problems(h.host, h))
    h.job["version"] = "PyTorch 1.8-1.10"
    f.actions[0].snippet = "with torch.autocast(device_type='cuda', dtype=torch.float16):\n    loss = ..."
    assert any(v.startswith("release-fit") for v in release_fit_problems(h.host, h))
