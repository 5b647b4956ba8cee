"""A GPU program with no ML framework has no model: the copies it makes before its first kernel are its inputs, and
the job stage says so in the program's words (``frameworks.native``'s ``first_upload``).

Read off a real export in the h37-survey-nsys survey (p4arth/cuda-perf-sandbox ``vecAdd``, no licence: described in
``tests/fixtures/wild/SURVEY.md``): its two pageable input copies were "the model's parameters and first inputs
uploaded once".  Here by construction: a native loop (``synthetic.nsysexport``, no NVTX) that loads its module and
copies two inputs before its first kernel."""

from __future__ import annotations

import os
import sqlite3
from types import SimpleNamespace

from synthetic.nsysexport import SESSION_START_NS, NsysJob, write
from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.sqlite_edits import add_first_inputs


def test_a_native_program_s_first_copies_are_its_inputs_not_a_model(tmp_path):
    p = str(tmp_path / "vecadd.sqlite")
    write(p, NsysJob(steps=6, step_range=None, autograd_nvtx=False, shuffle=False))
    con = sqlite3.connect(p)
    add_first_inputs(con, SESSION_START_NS + 100_000)  # before the first step: load the module, copy 2 inputs
    con.commit()
    con.close()
    host = SimpleNamespace(host="h0", path=p, format="nsys", size=os.path.getsize(p))
    job = analyze_session("v", "s", [host]).to_dict()["hosts"][0]["job"]
    (part,) = [x for x in job["phase_evidence"].split("; ") if "before the first kernel" in x]
    assert "the program's first inputs uploaded once" in part and "model" not in part, part
