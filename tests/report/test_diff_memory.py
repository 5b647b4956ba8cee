"""A diff of two memory snapshots says what changed in memory (issue #37 item 5, on every surface).

Users diff two snapshots to see whether a change worked (inference_mode, checkpointing, a smaller batch, expandable
segments).  A snapshot times no GPU work, so the diff compares what the single report computes of each side's memory
(``GpuSummary.memory``: peaks, the reserve beyond the allocated peak, what holds the peak, capacity, the top sites) and
the bytes a fixed finding said it frees against the peak realised.  Truth: by construction (the same forward-only job
with autograd on and under inference mode, ``synthetic.memsnapshot.forward_only``), and each real snapshot's own
report (``tests/fixtures/snapshots_wild``: two public CS336 snapshots, a forward with autograd on and one under
``inference_mode`` -- two repositories' jobs, so the diff also says they are not the same work).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synthetic import memsnapshot as msnap
from tb_gpu_advisor.cli import main as cli
from tb_gpu_advisor.common.fmt import gb
from tb_gpu_advisor.common.thresholds import T
from tests.support.paths import REPO

WILD = REPO / "tests" / "fixtures" / "snapshots_wild"
H200 = REPO / "tests" / "fixtures" / "h200_memory"
TRACE_WITHOUT_MEMORY = next((REPO / "tests" / "fixtures" / "h200_jobs" / "torch_compile_train").glob("*.pt.trace.json.gz"))
TRACE_WITH_MEMORY = next((H200 / "torch_mem_activations").glob("*.pt.trace.json.gz"))


def run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = cli.main(["diff", *argv, "--cache-dir", "off"])
    out, err = capsys.readouterr()
    return rc, out, err


def report_memory(capsys, path: Path) -> dict:
    assert cli.main(["report", str(path), "--format", "json", "--cache-dir", "off"]) in (0, 1)
    doc = json.loads(capsys.readouterr()[0])
    return doc["reports"][0]["hosts"][0]["gpus"][0]["memory"]


@pytest.fixture(scope="module")
def one_job(tmp_path_factory) -> tuple[Path, Path, dict, dict]:
    d = tmp_path_factory.mktemp("memdiff")
    grad, no_grad = msnap.forward_only(grad=True), msnap.forward_only(grad=False)
    return (Path(msnap.write(str(d / "forward_autograd.pickle"), grad.doc)),
            Path(msnap.write(str(d / "forward_inference.pickle"), no_grad.doc)), grad.truth, no_grad.truth)


def rows(doc: dict, gpu: int = 0) -> dict[str, dict]:
    m = next(m for m in doc["memory"] if m["gpu"] == gpu)
    return {r["key"]: r for r in m["rows"]}


def test_two_snapshots_of_one_job_are_compared_by_memory(one_job, capsys):
    """Autograd on vs inference mode, truth by construction: the peak, what is held between passes (the weights, on
    both sides) and the forward's tensors at the peak; the step, kernel and GPU tables are not drawn (was: exit 2,
    "no step time", and a headline table of n/a beside n/a)."""
    a, b, ta, tb = one_job
    rc, out, err = run(capsys, str(a), str(b), "--format", "json")
    assert rc == 0, err
    d = json.loads(out)
    assert d["base"]["memory_only"] and d["new"]["memory_only"] and not d["base"]["error"] and not d["new"]["error"]
    assert d["step"]["verdict"] == "unknown"
    r = rows(d)
    # autograd keeps every layer's tensors: the weights and all of them at the peak
    assert r["peak_allocated"]["base"] == ta["params_bytes"] + ta["kept_bytes"]
    assert r["activations"]["base"] == ta["kept_bytes"]
    # inference frees a layer's tensors once the next has used them: two layers live at once at most
    assert r["activations"]["new"] == 2 * tb["kept_bytes"]
    assert r["peak_allocated"]["new"] == tb["params_bytes"] + 2 * tb["kept_bytes"]
    assert r["held"]["base"] == r["held"]["new"] == ta["params_bytes"]  # the weights, held between passes on both
    assert r["peak_allocated"]["delta"] == r["peak_allocated"]["new"] - r["peak_allocated"]["base"]
    assert "capacity" not in r and "peak_share" not in r  # a snapshot records no capacity: no row of blanks
    assert d["memory"][0]["capacity_note"]
    assert not any(d[k] for k in ("breakdown", "headline", "kernel_classes", "kernels", "ops", "gpus"))
    assert d["incomparable"] == []  # the same job: no "not comparable"


def test_predicted_bytes_next_to_the_realised_peak(one_job, capsys):
    """The base's finding said how many bytes inference mode frees; the new side realised its peak: both shown, the
    ratio judged by the same tolerance as a time saving."""
    a, b, _, _ = one_job
    base = json.loads(_report_json(capsys, a))
    finding = next(f for f in base["findings"] if f["rule"] == "activation_memory")
    rc, out, _ = run(capsys, str(a), str(b), "--format", "json")
    assert rc == 0
    d = json.loads(out)
    fixed = next(f for f in d["findings"] if f["rule"] == "activation_memory")
    assert fixed["status"] == "fixed" and fixed["base_saving_bytes"] == finding["saving_bytes"]
    c = d["memory_calibration"]
    r = rows(d)["peak_reserved"]
    assert c["findings"] == ["activation_memory"] and c["predicted_bytes"] == finding["saving_bytes"]
    assert c["realised_bytes"] == r["base"] - r["new"] and c["measure"] == "peak reserved"
    assert c["ratio"] == pytest.approx(c["realised_bytes"] / c["predicted_bytes"], abs=1e-3)
    assert c["within"] is (abs(c["ratio"] - 1) <= T("diff.calibration_tolerance"))
    assert c["within"] is True


def _report_json(capsys, path: Path) -> str:
    assert cli.main(["report", str(path), "--format", "json", "--cache-dir", "off"]) in (0, 1)
    return json.dumps(json.loads(capsys.readouterr()[0])["reports"][0])


def test_the_same_numbers_in_text_markdown_json_and_the_tab(one_job, capsys):
    """Each memory number as common/fmt writes it, the same in the CLI's text, its Markdown and the JSON's display
    (what the tab and the MCP answer show)."""
    a, b, _, _ = one_job
    texts = {fmt: run(capsys, str(a), str(b), "--format", fmt)[1] for fmt in ("text", "markdown", "json")}
    d = json.loads(texts["json"])
    shown = next(t for t in d["display"]["tables"] if t["id"] == "memory")
    for r in rows(d).values():
        want = [r["label"], gb(r["base"]), gb(r["new"])]
        assert want == shown["rows"][[x[0] for x in shown["rows"]].index(r["label"])][:3]
        for fmt in ("text", "markdown"):
            assert all(w in texts[fmt] for w in want), (fmt, want)
    line = d["display"]["memory_calibration"][0]  # the text's words, opening with a capital on the tab
    assert line[1:] in texts["text"] and line[1:] in texts["markdown"] and gb(d["memory_calibration"]["predicted_bytes"]) in line
    assert d["display"]["verdict"] in texts["text"]
    assert "HEADLINE" not in texts["text"] and "per-step spread" not in texts["text"]


def test_real_snapshots_read_the_single_reports_numbers(capsys):
    """Two real snapshots: every number of the diff is the one each single report gives (no measure of its own);
    two repositories' jobs (a training forward, an inference benchmark) are said to be different work."""
    a, b = WILD / "forward_autograd_cs336.pickle.gz", WILD / "forward_no_grad_cs336.pickle.gz"
    ma, mb = report_memory(capsys, a), report_memory(capsys, b)
    rc, out, err = run(capsys, str(a), str(b), "--format", "json")
    assert rc == 0, err
    d = json.loads(out)
    r = rows(d)
    for key, field in (("peak_allocated", "peak_allocated_bytes"), ("peak_reserved", "peak_reserved_bytes"),
                       ("reserve", "gap_bytes")):
        assert (r[key]["base"], r[key]["new"]) == (ma[field], mb[field])
    for cat in ("held", "activations"):
        assert (r[cat]["base"], r[cat]["new"]) == (ma["breakdown"][cat], mb["breakdown"][cat])
    sites = {(s["site"], s["category"]): s for s in d["memory"][0]["sites"]}
    for site, cat, nbytes, _ in ma["top"][:3]:
        assert sites[(site, cat)]["base_bytes"] == nbytes
    assert d["incomparable"]  # training vs inference: two jobs, said before any number
    assert d["memory_calibration"] is None  # the base predicted nothing in bytes


def test_a_snapshot_beside_a_trace_without_memory_is_one_clear_line(capsys):
    """Nothing in common: one line that says why and what to capture, exit 2 -- not a table of blanks (was: the
    trace's kernels "added" beside a snapshot, a headline of n/a)."""
    rc, out, err = run(capsys, str(WILD / "forward_no_grad_cs336.pickle.gz"), str(TRACE_WITHOUT_MEMORY))
    assert rc == 2
    assert "nothing to compare" in out.lower() and "nothing to compare" in err
    assert "records no memory" in out
    for table in ("FINDINGS", "HEADLINE", "KERNEL", "GPUS", "STEP BREAKDOWN"):
        assert table not in out, table


def test_a_snapshot_beside_a_trace_that_records_memory_compares_memory(capsys):
    """A trace recorded with profile_memory holds the allocator's totals: memory is compared, with the trace's own
    report numbers and its capacity; the step is not (the snapshot timed no GPU work)."""
    snap = WILD / "forward_no_grad_cs336.pickle.gz"
    mt = report_memory(capsys, TRACE_WITH_MEMORY)
    rc, out, err = run(capsys, str(snap), str(TRACE_WITH_MEMORY), "--format", "json")
    assert rc == 0, err
    d = json.loads(out)
    r = rows(d)
    assert r["peak_allocated"]["new"] == mt["peak_allocated_bytes"] and r["capacity"]["new"] == mt["capacity_bytes"]
    assert r["capacity"]["base"] is None and r["peak_share"]["base"] is None
    assert d["base"]["memory_only"] and not d["new"]["memory_only"] and d["step"]["verdict"] == "unknown"
    assert not d["kernels"] and not d["headline"]


def test_control_two_traces_keep_their_step_diff(capsys):
    """What must not change (passes on main too): two traces are compared by step time, cards and kernels as before."""
    frag = next((H200 / "torch_mem_fragmented").glob("*.pt.trace.json.gz"))
    for a, b in ((TRACE_WITH_MEMORY, frag), (TRACE_WITHOUT_MEMORY, TRACE_WITHOUT_MEMORY)):
        rc, out, _ = run(capsys, str(a), str(b), "--format", "json")
        d = json.loads(out)
        assert rc == 0 and d["step"]["verdict"] != "unknown" and d["kernels"] and d["headline"] and d["breakdown"]
        assert not d["base"].get("memory_only") and not d["new"].get("memory_only")
        assert not d["base"]["error"] and not d["new"]["error"]


def test_two_traces_that_record_memory_gain_the_memory_table(capsys):
    """Traces recorded with profile_memory: the memory table beside the step diff, each number its report's; a trace
    without memory events has none."""
    frag = next((H200 / "torch_mem_fragmented").glob("*.pt.trace.json.gz"))
    rc, out, _ = run(capsys, str(TRACE_WITH_MEMORY), str(frag), "--format", "json")
    d = json.loads(out)
    mf = report_memory(capsys, frag)
    assert rows(d)["peak_reserved"]["new"] == mf["peak_reserved_bytes"]
    assert rows(d)["reserve"]["new"] == mf["gap_bytes"]
    rc, out, _ = run(capsys, str(TRACE_WITHOUT_MEMORY), str(TRACE_WITHOUT_MEMORY), "--format", "json")
    assert rc == 0 and json.loads(out)["memory"] == []
