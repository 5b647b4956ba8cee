"""The copies before a GPU's first compute are named by what that compute is: a collective's set-up reads "before the
first collective", never "kernel" (h37-jaxunrec70; h37-hunt70b's *Left* 3: NVIDIA/nccl-tests' set-up on 4 V100s,
``wild/nccl_setup_v100x4_nvprof``, each GPU's first compute an all-reduce, read "124 copies to the device before the
first kernel").

Truth by construction (``synthetic.nsysexport``): a native program that loads its module and copies 2 inputs before
its loop, its loop's kernels NCCL's own (``ncclDevKernel_AllReduce_Sum_f32_RING_LL``: collectives by their name).
Base dbf6cf15 named no copy among the one-time costs (``job.phase._first_uploads`` asked for a first kernel, none on
a GPU of collectives); main after hunt70b counted them and said "kernel".  Control: the same program with its own
kernels keeps "before the first kernel"."""

from __future__ import annotations

import os
import sqlite3
from types import SimpleNamespace

import pytest

from synthetic.nsysexport import SESSION_START_NS, NsysJob, write
from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.sqlite_edits import add_first_inputs


def _phase_words(tmp_path, collective: bool) -> str:
    p = str(tmp_path / "prog.sqlite")
    write(p, NsysJob(steps=6, step_range=None, autograd_nvtx=False, shuffle=False))
    con = sqlite3.connect(p)
    if collective:  # every kernel of the loop NCCL's all-reduce
        ids = [r[0] for r in con.execute("SELECT DISTINCT shortName FROM CUPTI_ACTIVITY_KIND_KERNEL")]
        ids += [r[0] for r in con.execute("SELECT DISTINCT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL")]
        con.executemany("UPDATE StringIds SET value = ? WHERE id = ?",
                        [("ncclDevKernel_AllReduce_Sum_f32_RING_LL", i) for i in set(ids)])
    add_first_inputs(con, SESSION_START_NS + 100_000)  # before the first step: load the module, copy 2 inputs
    con.commit()
    con.close()
    host = SimpleNamespace(host="h0", path=p, format="nsys", size=os.path.getsize(p))
    return analyze_session("v", "s", [host]).to_dict()["hosts"][0]["job"]["phase_evidence"]


@pytest.mark.parametrize("collective,word", [(True, "collective"), (False, "kernel")],
                         ids=["collectives", "control_kernels"])
def test_the_copies_before_the_first_compute_name_what_it_is(tmp_path, collective, word):
    said = _phase_words(tmp_path, collective)
    parts = [x for x in said.split("; ") if "copies to the device before the first" in x]
    assert len(parts) == 1, said
    part = parts[0]
    assert f"before the first {word} (" in part, part
