"""A loop's period said by what it launches: kernels, copies and fills counted apart (issue #37, h37-survey73).

``job.period`` reads a loop's period from every event the host launched on the GPU, copies and fills too.  A loop that
uploads its input and then runs its kernels repeats a sequence whose launches are not all kernels, yet the steps'
note called it "the same N-kernel launch sequence", counting the upload as a kernel:

- the real capture ``wild/square_p5000_pageable_loop`` (gpu-mode lecture 1's ``torch.square(torch.randn(n, n).cuda())``
  on a Quadro P5000): one pageable upload and one kernel an iteration, read on main as "10 repeats of the same 2-kernel
  launch sequence";
- ``synthetic.autograd_nvtx``'s inference loop that never reads back (``no_grad``, ``readback=False``): one upload and
  the layers' kernels an iteration, read on main as "the same 6-kernel launch sequence" for 5 kernels and a copy.

Control: a period of kernels only keeps its words ("N-kernel launch sequence"): ``tests/job/test_period.py`` and
``tests/job/test_reading_loops.py`` assert them, unchanged.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from types import SimpleNamespace

import pytest

from synthetic import autograd_nvtx as an
from tb_gpu_advisor.runtime.pipeline import analyze_session

WILD = Path(__file__).resolve().parents[1] / "fixtures" / "wild" / "square_p5000_pageable_loop"


def _host(path: Path, fmt: str) -> dict:
    host = SimpleNamespace(host="h0", path=str(path), format=fmt, size=os.path.getsize(path))
    return analyze_session("w", "s", [host]).to_dict()["hosts"][0]


def test_a_real_upload_and_kernel_loop_is_one_kernel_and_one_copy():
    """Main: "10 repeats of the same 2-kernel launch sequence" -- the 400 MB upload counted as a kernel."""
    (trace,) = WILD.glob("*.pt.trace.json.gz")
    note = _host(trace, "kineto")["steps"]["note"]
    assert "10 repeats of the same launch sequence of 1 kernel and 1 copy" in note, note
    assert "-kernel launch sequence" not in note


def _per_iteration(path: str, table: str, steps: int) -> int:
    """Rows of ``table`` an iteration in the generator's own export: the truth by construction."""
    with sqlite3.connect(path) as con:
        n = con.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]  # noqa: S608 - the two table names below
    assert n % steps == 0, (table, n, steps)
    return n // steps


@pytest.mark.parametrize("layers", [1, 2])
def test_a_generated_fed_loop_counts_its_kernels_and_its_upload(tmp_path, layers):
    """Main: "12 repeats of the same 6-kernel launch sequence" for 2 layers (5 kernels and 1 copy an iteration)."""
    p = str(tmp_path / "loop.sqlite")
    an.write(p, "no_grad", steps=12, layers=layers, readback=False)
    kernels = _per_iteration(p, "CUPTI_ACTIVITY_KIND_KERNEL", 12)
    copies = _per_iteration(p, "CUPTI_ACTIVITY_KIND_MEMCPY", 12)
    note = _host(Path(p), "nsys")["steps"]["note"]
    want = f"{kernels} kernels" if kernels > 1 else "1 kernel"
    assert copies == 1
    assert f"12 repeats of the same launch sequence of {want} and 1 copy" in note, note

