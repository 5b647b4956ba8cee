"""A window that is mostly the host's own CPU work between the GPU's is said to be so, and how to see that work
(issue #37, survey h37-survey7a).

The real case (fckwader/shitbox ``report1.sqlite`` @c98ad5b2, no licence, so not kept: ``tests/fixtures/wild/
SURVEY.md``): an A100 ``./hello``: three pageable 32 MB uploads, then 14.8 s of host work with no CUDA call, then one
8.7 ms kernel and a read-back.  Main said only "most of it is host work between iterations" (info); nothing covers
that time on the host thread, so the capture cannot say what it is: the report now names it as the host's own code
the capture did not record, says the gaps fill most of the window, and leads with how to record it.

By construction (``synthetic.nsysexport.write_host_work_window``): the host's work is known, unrecorded, or inside the
program's NVTX range ``cpu_reference`` (the control: recorded, named by its range).
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.cli import main as cli


def _gaps(path: str) -> dict:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        cli.main(["report", path, "--format", "json", "--cache-dir", "off"])
    found = [f for f in json.loads(out.getvalue())["reports"][0]["findings"] if f["id"].startswith("step_gaps")]
    assert len(found) == 1
    return found[0]


@pytest.mark.parametrize("ranged", [False, True])
def test_the_hosts_own_work_is_named_with_how_to_see_it(tmp_path, ranged: bool) -> None:  # noqa: ANN001
    path = str(tmp_path / "report1.sqlite")
    truth = nx.write_host_work_window(path, ranged=ranged)
    f = _gaps(path)
    assert f["metric"]["detail"]["avg_gap_ms"] == pytest.approx(truth["host_ms"], rel=0.02)
    assert "of the" in f["summary"] and "capture window: it records the host's own work" in f["summary"]
    if truth["recorded"]:
        assert "did not record" not in f["summary"] and "`cpu_reference`" in f["summary"]
    else:
        assert "the host's own code, which the capture did not record" in f["summary"]
        assert "NVTX" in f["actions"][0]["text"] and "--sample" in (f["actions"][0]["snippet"] or "")
