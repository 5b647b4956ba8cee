"""A kernel compiled on the host by a compiler the capture does not trace: the silence before a run-time link is a
first call's one-time compile, not the host's steady work (issue #37, survey h37-survey10).

The real case (quasiben/nvtx-examples ``numba-jit.sqlite`` @fd66d32, no licence, so not kept:
``tests/fixtures/wild/SURVEY.md``, "Survey h37-survey10"): a Numba ``@cuda.jit`` kernel's first call spends 145 ms
with no CUDA call (type inference, LLVM, NVVM), then ``cuLinkCreate`` / ``cuLinkComplete`` / ``cuModuleLoadDataEx``
and one 4.8 us kernel.  Main read it as critical host-bound, phase "steady".

By construction (``synthetic.nsysexport.write_jit_first_call``): the same silence with no link after it (the host's
own work) is the control.
"""

from __future__ import annotations

from synthetic import nsysexport as nx
from tests.support.cli_report import ran_report


def _report(path: str) -> dict:
    code, report = ran_report(path)
    assert code == 0
    return report


def test_the_silence_before_a_link_is_a_one_time_compile(tmp_path) -> None:  # noqa: ANN001 - pytest's
    """The compile (truth: the host's silence from its last upload to the link) is booked one-time, with the link
    and module load up to the launch (under 1 ms more); the report leads with the cold start, not host-bound."""
    path = str(tmp_path / "numba-jit.sqlite")
    truth = nx.write_jit_first_call(path)
    report = _report(path)
    job = report["hosts"][0]["job"]
    assert job["phase"] == "warm-up"
    assert "1 kernel compiled on the host and linked at run time" in job["phase_evidence"]
    assert truth["compile_ms"] <= job["one_time_ms"] <= truth["compile_ms"] + 1.0
    assert report["findings"][0]["rule"] == "cold_start"
    assert not any(f["title"].startswith("Host-bound") for f in report["findings"])


def test_silence_with_no_link_after_it_is_the_hosts_own_work(tmp_path) -> None:  # noqa: ANN001 - pytest's
    """Control: the same silence followed by a launch and no link holds no sign of a compile: host-bound as before."""
    path = str(tmp_path / "nolink.sqlite")
    truth = nx.write_jit_first_call(path, link=False)
    report = _report(path)
    job = report["hosts"][0]["job"]
    assert truth["compile_ms"] == 0.0
    assert "compiled on the host" not in job["phase_evidence"]
    assert job["one_time_ms"] < 1.0
    top = report["findings"][0]
    assert top["title"].startswith("Host-bound") and top["severity"] == "critical"
