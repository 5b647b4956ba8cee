"""Issue #36 deliverable 6, the polish a user reads: counts in the number their noun needs ("1 steps",
"launch(es)", "1 host(s)", "The GPUs" for one GPU) and shares as percentages ("exposed share 1", "0.841")."""

from __future__ import annotations

import re

from tb_gpu_advisor.common.fmt import plural
from tb_gpu_advisor.model.schema import Table
from tb_gpu_advisor.report import render
from tb_gpu_advisor.runtime.advisor import Advisor
from tests.support.paths import DEMO_LOGS


def test_plural_fits_the_count():
    assert [plural(1, "host"), plural(2, "host"), plural(1, "kernel launch"), plural(3, "kernel launch"),
            plural(2, "worker process"), plural(1.5, "copy", "copies")] == [
        "1 host", "2 hosts", "1 kernel launch", "3 kernel launches", "2 worker processes", "1.5 copies"]


def _message_strings(tree) -> list[tuple[int, str]]:
    """The string literals of a module, f-strings' text parts included, docstrings left out."""
    import ast

    docs = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def test_no_parenthesised_plural_in_the_code_users_read():
    """No message is written as ``host(s)`` / ``launch(es)``: each says the count's own number."""
    import ast
    import pathlib

    import tb_gpu_advisor

    root = pathlib.Path(tb_gpu_advisor.__file__).parent
    bad = [f"{p.relative_to(root)}:{line}: {text[:60]}" for p in root.rglob("*.py")
           for line, text in _message_strings(ast.parse(p.read_text())) if re.search(r"(?:[a-z]|^)\((s|es)\)", text)]
    assert not bad, bad


def test_share_columns_print_as_percentages():
    t = Table("Collectives per step and GPU", ["collective", "ms", "exposed share"], [["AllReduce", 1.03, 1.0],
                                                                                    ["AllGather", 0.5, 0.841]])
    lines = render.table_markdown(t)
    assert "100.0%" in lines[2] and "84.1%" in lines[3] and "0.84" not in "".join(lines)


def test_one_gpus_input_wait_says_the_gpu():
    """The demo's PyTorch input-bound run has one GPU: "The GPU sits idle", not "The GPUs sit idle"."""
    advisor = Advisor(str(DEMO_LOGS), cache="off")
    session = next(s for s in advisor.sessions() if s.run == "pytorch_input_bound")
    rep = advisor.report(session).report
    (f,) = [f for f in rep.findings if f.rule == "input_bound"]
    assert f.summary.startswith("The GPU sits idle"), f.summary


def test_list_gives_each_size_in_its_unit(tmp_path):
    """``report --list`` printed "0.0 MB" for a demo session of 40 kB: each size in its own unit now."""
    import io

    from tb_gpu_advisor.cli import main as cli
    from tests.support.profile_files import write_profile

    path = write_profile(str(tmp_path), "r", "2026_01_01_00_00_00", "h")
    args = cli.build_parser().parse_args(["report", str(tmp_path), "--list", "--cache-dir", "off"])
    out = io.StringIO()
    assert args.func(args, stdout=out, stderr=io.StringIO()) == 0
    import os

    size = os.path.getsize(path)
    assert "0.0 MB" not in out.getvalue() and (f"{size} bytes" in out.getvalue() or "KiB" in out.getvalue())


def test_markdown_leaves_intraword_underscores_alone():
    """MCP and ``--format markdown`` wrote ``jit\\_train\\_step``: an underscore between letters cannot start
    emphasis (CommonMark), so it is written as is; one that could still is escaped."""
    assert render.md_inline("jit_train_step") == "jit_train_step"
    assert render.md_inline("_x_ and *y*") == "\\_x\\_ and \\*y\\*"


def test_compare_hides_changes_that_read_as_zero():
    """Compare listed kernels "changed +0.0": a change under the table's precision is no change."""
    from tb_gpu_advisor.report import diff_render
    from tb_gpu_advisor.report.diff import Change

    rows = diff_render._change_rows([Change("k1", "k1", 10.0, 10.01, 0.01, "changed"),
                                     Change("k2", "k2", 10.0, 12.0, 2.0, "changed"),
                                     Change("k3", "k3", None, 0.0, 0.0, "added")],
                                    diff_render._us, diff_render._signed_us, hide_zero=True)
    assert [r[0] for r in rows] == ["k2", "k3"]


def test_an_overlap_names_the_other_findings_by_rank_never_by_rule_id():
    """Issue #36 polish: "Overlaps with tensor_core_unused" named an internal rule id (the real V100 ResNet-50 trace,
    whose mixed-precision and Tensor Core findings recover the same time); the text and markdown name the other
    finding by the rank it is shown at."""
    import contextlib
    import io
    import json

    import pytest

    from tb_gpu_advisor.cli import main as cli
    from tests.support.paths import SHARED_PROFILES

    folder = SHARED_PROFILES / "wild-torch"
    if not folder.is_dir():
        pytest.skip("needs ../shared/profiles/wild-torch")
    out = {}
    for fmt in ("json", "text", "markdown"):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
            cli.main(["report", str(folder), "--run", "resnet50_num_workers_4", "--cache-dir", "off", "--format", fmt])
        out[fmt] = buf.getvalue()
    findings = json.loads(out["json"])["findings"]
    ranks = {f["id"]: i for i, f in enumerate(findings, 1)}
    overlapping = [f for f in findings if (f.get("saving") or {}).get("overlaps")]
    assert overlapping
    for f in overlapping:
        others = ", ".join(f"#{r}" for r in sorted(ranks[o] for o in f["saving"]["overlaps"]))
        for fmt in ("text", "markdown"):
            assert f"Overlaps with finding {others}" in " ".join(out[fmt].split()), fmt
    for rule in {f["rule"] for f in findings}:
        for fmt in ("text", "markdown"):
            assert f"Overlaps with {rule}" not in out[fmt] and f"Overlaps with {rule.replace('_', chr(92) + '_')}" not in out[fmt]


def test_a_tiny_jitted_step_counts_its_calls_in_words_not_call_s():
    """The step-level launch-bound text said "1.5 jitted call(s)" (a parenthesised plural and a mean with no "on
    average"): now the count's own number, and a mean says it is one."""
    from tb_gpu_advisor.frameworks import jax as _jax  # noqa: F401  (the framework whose dispatch is named)
    from tb_gpu_advisor.metrics.types import Dispatch
    from tb_gpu_advisor.rules import REGISTRY, T
    from tests.support.rules_factory import STEP_MS, healthy

    for calls, want in ((1.5, "1.5 jitted calls on average costing"), (1.0, "1 jitted call costing")):
        m = healthy(dispatch=Dispatch(calls_per_step=calls, host_ms_per_step=0.8 * STEP_MS))
        m.capture.framework = "jax"
        m.headline.launch_wait_share = T("launch_bound.critical")
        m.breakdown.launch_wait = T("launch_bound.critical") * STEP_MS
        m.breakdown.device_compute = 0.1 * STEP_MS
        m.small_kernels.share_of_kernel_time = m.small_kernels.share_of_kernels = 0.9
        (f,) = REGISTRY["launch_bound"].check(m)
        assert want in f.summary, f.summary
        assert "(s)" not in f.summary


def test_every_step_source_has_words_and_the_tab_never_shows_the_id():
    """The tab's host line read "13 steps (trace_train)": an internal id.  Every source the detector can name has
    words (``steps.types.SOURCE_LABEL``), the report carries them, and the tab prints those."""
    import typing

    from tb_gpu_advisor.steps.types import SOURCE_LABEL, StepSource

    assert set(typing.get_args(StepSource)) == set(SOURCE_LABEL)
    assert all("_" not in v for v in SOURCE_LABEL.values())
    advisor = Advisor(str(DEMO_LOGS), cache="off")
    session = next(s for s in advisor.sessions() if s.run == "input_bound")
    steps = advisor.report(session).report.hosts[0].steps
    assert steps["source_label"] == SOURCE_LABEL[steps["source"]]
    # the tab's side: frontend/test/views.test.js "the host line names the step source in words"
