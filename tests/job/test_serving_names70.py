"""A serving loop's own names say inference, and its numbered turns are its steps (issue #37 class 2, h37-names70).

``predict``, ``inference``, ``generate`` and evaluation's names said the job's kind (``nvtx.is_inference_range``), a
serving loop's did not: ``serve``, ``serving_step``, ``serve_request``, ``handle_request``, ``request {n}``
(h37-kind69 *Left* 2).  Such a capture's kind then came from its kernels (a forward GEMM loop, h37-fwd69) or from
nothing ("unknown"), and its numbered turns read as "the most repeated top-level range" (medium), not as steps the
program named.  Truth by construction: ``synthetic.nsysexport`` (generic GEMM kernels, no op recorded).

Base dbf6cf15: every build below reads its kind without the user's ranges (``serve`` and ``handle_request``:
"unknown"), and the numbered turns' steps read ``nvtx_top_range``; the name cases fail.  Controls: words that only
contain a serving word (``server``, ``service``, ``observe``, ``reserve``), MPI's requests.
"""

from __future__ import annotations

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.frameworks import nvtx
from tests.support.cli_report import first_host


def _host(tmp_path, step_range: str) -> dict:
    path = tmp_path / "job.sqlite"
    nx.write(str(path), nx.NsysJob(steps=8, ops=9, step_range=step_range, autograd_nvtx=False))
    return first_host(path)


@pytest.mark.parametrize("step_range, steps", [("serve_request {k}", "nvtx_range"), ("serving_step {k}", "nvtx_range"),
                                               ("request {k}", "nvtx_range"), ("handle_request", "nvtx_top_range"),
                                               ("serve", "nvtx_top_range")])
def test_a_serving_loops_names_say_inference(tmp_path, step_range, steps):
    host = _host(tmp_path, step_range)
    job = host["job"]
    assert (job["kind"], job["kind_confidence"]) == ("inference", "medium"), job["kind_evidence"]
    assert job["kind_evidence"].startswith("the user's NVTX ranges name inference: `"), job["kind_evidence"]
    assert (host["steps"]["source"], host["steps"]["found"]) == (steps, 8), host["steps"]["note"]


@pytest.mark.parametrize("name, says", [
    ("serve", True), ("serving_step", True), ("serve_request", True), ("handle_request", True), ("request 3", True),
    ("request_7", True), ("Serving", True), ("process_request 2", True),
    ("server", False), ("service", False), ("observe", False), ("reserve", False), ("MPI_Request", False),
    ("wait_request", False), ("request", False), ("serve_backward", False)])
def test_the_serving_words(name, says):
    assert nvtx.is_inference_range(name) is says


@pytest.mark.parametrize("name, says", [
    ("serving_step 4", True), ("serve_request 3", True), ("serve_request", True), ("request 3", True),
    ("serving batch 3", True), ("serve", False), ("serving", False), ("server 3", False), ("handle_request", False),
    ("requests", False)])
def test_a_serving_loops_turns_are_step_names(name, says):
    assert nvtx.is_step_name(name) is says
