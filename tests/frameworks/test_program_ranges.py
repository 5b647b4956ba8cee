"""Which marked ranges are the user's own structure has one home (``frameworks.user_ranges``), and every stage agrees.

The job stage (``job.structure``: which ranges may be a step), the steps (``steps.detect``: the ranges that bound one
pass) and the metrics (the ranges named in the GPU's idle) each decided apart which NVTX ranges are the program's own;
the steps and the metrics left out a library's NVTX domain, the job stage only a library's names.  Nsight's MPI trace
writes ``MPI_Send`` / ``MPI_Recv`` in the ``MPI`` domain (the kept hpcgroup/pipit capture, survey h37-survey14): a
library's calls, never the program's step, whatever their names.

Truth: the kept real capture's own domain table (the ranges in domain ``MPI`` are the library's), and the generator's
control (``write_mpi_saxpy(mpi_domain="")``: the same ranges in the default domain, as a program marking its own code
writes them -- the domain decides, not the names).
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from synthetic.nsysexport import write_mpi_saxpy
from tb_gpu_advisor.formats import read
from tb_gpu_advisor.frameworks.user_ranges import (communication_ranges, library_range_mask, marked_ranges,
                                                  program_ranges)
from tb_gpu_advisor.job.structure import _tool_ranges
from tb_gpu_advisor.model.trace import Trace
from tests.support.paths import FIXTURES

KEPT = FIXTURES / "wild" / "mpi_saxpy_a100_rank0" / "saxpy-mpi-cuda_nsys_perlmutter0.sqlite"


def _read(path: Path) -> Trace:
    return read(SimpleNamespace(host="rank0", path=str(path), format="nsys"))


def _names(t: Trace, idx: np.ndarray) -> set[str]:
    return {t.h.names[int(i)] for i in t.h.name[idx]}


def _in_domain(t: Trace, domain: str) -> np.ndarray:
    """Host event indices of the NVTX ranges the capture itself puts in ``domain``."""
    r = t.ranges
    return r.idx[np.asarray([r.domains[int(d)] == domain for d in r.domain], bool)]


@pytest.fixture(scope="module")
def kept() -> Trace:
    return _read(KEPT)


@pytest.fixture(scope="module", params=["MPI", ""])
def generated(request, tmp_path_factory) -> tuple[Trace, str]:
    path = tmp_path_factory.mktemp("mpi") / "rank0.sqlite"
    write_mpi_saxpy(str(path), mpi_domain=request.param)
    return _read(path), request.param


def test_library_domain_ranges_are_marked_but_not_the_programs(kept: Trace):
    mpi = _in_domain(kept, "MPI")
    assert mpi.size and {"MPI_Send", "MPI_Recv"} <= _names(kept, mpi)
    assert np.isin(mpi, marked_ranges(kept.ranges)).all()  # the job reads them as what ran
    assert not np.isin(mpi, program_ranges(kept)).any()  # never the user's code
    assert library_range_mask(kept.h, kept.ranges)[np.isin(kept.ranges.idx, mpi)].all()


def test_the_domain_decides_not_the_name(generated: tuple[Trace, str]):
    t, domain = generated
    mpi = np.flatnonzero(np.isin(t.h.name, [t.h.names.index(n) for n in ("MPI_Send", "MPI_Recv")]))
    mpi = mpi[np.isin(mpi, t.ranges.idx)]
    assert mpi.size
    own = np.isin(mpi, program_ranges(t))
    assert own.all() if domain == "" else not own.any()
    # a communication library's (the host waits there for its peers) where in MPI's domain; the program's otherwise
    comm = np.isin(mpi, communication_ranges(t.ranges))
    assert comm.all() if domain == "MPI" else not comm.any()


@pytest.mark.parametrize("which", ["kept", "MPI", "default domain"])
def test_every_stage_asks_the_one_home(which: str, kept: Trace, tmp_path: Path):
    """The job's step candidates, the steps' pass ranges and the metrics' ranges are one set: a range the job may take
    as the program's step is one the metrics name as the program's code, and the steps bound a pass with."""
    if which == "kept":
        t = kept
    else:
        path = tmp_path / "rank0.sqlite"
        write_mpi_saxpy(str(path), mpi_domain="MPI" if which == "MPI" else "")
        t = _read(path)
    own = program_ranges(t)
    r = t.ranges
    # the steps stage calls program_ranges itself (steps/passes._pass_phase_window): no set of its own to compare
    np.testing.assert_array_equal(np.sort(r.idx[~_tool_ranges(t)[r.idx]]), own)
