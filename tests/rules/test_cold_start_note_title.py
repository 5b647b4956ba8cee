"""The one-time costs note's title says where its text says they lie (h37-review33).

Since h37-coldwords33 the info note of one-time costs (phase mixed: ``job.one_time_min_share`` to ``job.warmup_share``
of the window) says the part of them inside the kept steps apart, but its title still read "The window holds one-time
costs outside the pass" above "13.5 ms of them ran inside the pass analysed" (``wild/extrap_parallel_kernels_gtx1060``)
-- a finding contradicting its own numbers.  Wrong assumption: the note's costs all lie outside the steps.  Truth by
construction (``synthetic.nsysexport.write_one_pass_gemm`` with a long DGEMM, so the costs are a few % of the window):
A's upload, the library's start-up and B's upload inside the one pass, the context's ``cudaMalloc`` before it."""

from __future__ import annotations

from pathlib import Path

from synthetic import nsysexport
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.report_store import session_report
from tests.support.wild_hosts import wild_sessions


def test_a_note_of_costs_partly_inside_the_pass_says_so_in_its_title(tmp_path: Path) -> None:
    """Main (d836206e): "The window holds one-time costs outside the pass", its text "308.1 ms of them ran inside the
    pass analysed"."""
    path = tmp_path / "report1.sqlite"
    nsysexport.write_one_pass_gemm(str(path), gemm_ms=8000.0)
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, "nsys"))
    assert rep.error is None, rep.error
    (f,) = [f for f in rep.findings if f.rule == "cold_start"]
    assert f.severity == "info", (f.severity, f.summary)  # the note, not the cold-start warning
    inside = f.metric.detail["in_steps_one_time_ms"]
    assert 0 < inside < f.metric.detail["one_time_ms"], f.metric.detail  # some inside the pass, the context before it
    assert f"{inside:.1f} ms of them ran inside the pass analysed" in " ".join(f.summary.split()), f.summary
    assert f.title == "The window holds one-time costs inside and outside the pass", f.title


def test_a_real_note_s_title_fits_its_text() -> None:
    """``wild/extrap_parallel_kernels_gtx1060`` (ParallelKernelsTest, GTX 1060): 13.5 ms of its 185.9 ms of one-time
    costs (its first uploads) inside the one pass, the rest (``cudaFree``, ``cudaStreamCreate``) outside it."""
    (s,) = [s for s in wild_sessions() if s.run == "extrap_parallel_kernels_gtx1060"]
    rep = session_report(s).to_dict()
    (f,) = [f for f in rep["findings"] if f["rule"] == "cold_start"]
    assert "ms of them ran inside the pass analysed" in " ".join(f["summary"].split()), f["summary"]
    assert f["title"] == "The window holds one-time costs inside and outside the pass", f["title"]


def test_control_costs_all_outside_keep_their_title(tmp_path: Path) -> None:
    """A note whose costs lie wholly outside the steps keeps "outside": nothing of them in the pass's span."""
    from tb_gpu_advisor.rules.cold_start import _where_words

    assert _where_words(0.0, 120.0) == "outside"
    assert _where_words(0.0004, 120.0) == "outside"  # below the words' resolution: none said inside
    assert _where_words(120.0, 120.0) == "inside"
    assert _where_words(13.5, 185.9) == "inside and outside"
