"""Unified Memory page migrations are the driver's paging, not GPU work a step is made of (issue #37, survey
h37-survey7a).

The real cases (``tests/fixtures/wild/SURVEY.md``, section h37-survey7a; no licence, so not kept): NVIDIA's "An Even
Easier Introduction to CUDA" vector add on A100s (SpaceManV3/cp3 ``report1.sqlite`` and ``report6.sqlite``,
lsaeteurn/vectoraddition, igouProto/CSC746CUDALab): one ``add<<<1, 1>>>`` kernel of 6.25 s over two
``cudaMallocManaged`` buffers, then the host's result check pulling the pages back -- 768-1,536 ``CUDA_MEMCPY_KIND_UVM_DTOH``
migrations (correlation id 0: no call launched them) in ~2 ms bursts.  Main took the bursts for 254 steps of 2.45 ms,
dropped the kernel as the first "step" and reported an info gap between steps -- never that one thread ran on one of
the 108 SMs for 6.25 s (``small_grid``).

By construction (``synthetic.nsysexport.write_managed_kernel``): the same program, its kernel's launch configuration
and the migrations' counts known.
"""

from __future__ import annotations

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor import devices
from tb_gpu_advisor.formats.nsys.reader import read_trace
from tests.support.cli_report import first_report


@pytest.fixture(scope="module")
def managed(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict]:
    path = str(tmp_path_factory.mktemp("uvm") / "report1.sqlite")
    return path, nx.write_managed_kernel(path)


def test_the_reader_names_page_migrations_as_such(managed: tuple[str, dict]) -> None:
    path, truth = managed
    d = read_trace(path).devices[0]
    names = [d.names[i] for i in d.name.tolist()]
    migrations = [n for n in names if devices.page_migration([n])[0]]
    assert len(migrations) == truth["htod_migrations"] + truth["dtoh_migrations"]
    assert migrations.count(f"Memcpy HtoD ({devices.PAGE_MIGRATION})") == truth["htod_migrations"]
    assert migrations.count(f"Memcpy DtoH ({devices.PAGE_MIGRATION})") == truth["dtoh_migrations"]
    # still copies of their direction, for the copy metrics
    assert devices.copy_direction(migrations[0]) in ("h2d", "d2h")


def test_page_migration_bursts_make_no_steps_and_the_kernel_is_judged(managed: tuple[str, dict]) -> None:
    path, truth = managed
    rep = first_report(path)
    host = rep["hosts"][0]
    gpu = host["gpus"][0]
    # one step holding the kernel, not the result check's paging bursts (main: 58 steps of 10 ms, the kernel dropped)
    assert gpu["step_ms"] >= truth["kernel_ms"]
    bad = [f for f in rep["findings"] if f["severity"] in ("warning", "critical")]
    assert bad and bad[0]["rule"] == "small_grid", [(f["rule"], f["severity"]) for f in bad]
    assert "1 thread block of 1 thread" in bad[0]["summary"]
    assert not any(f["rule"] == "step_gaps" for f in rep["findings"])


def test_copies_that_are_page_migrations_get_the_managed_memory_fix(tmp_path) -> None:  # noqa: ANN001 - pytest's
    """A full grid (no small_grid) whose kernel faults its pages in: 2,000 migrations of 25 us under a 110 ms kernel,
    50 ms it waits on them (SpaceManV3/cp3 ``report4``: 19,766 migrations, 58.5 ms, a 113.7 ms kernel that takes 0.6 ms
    once prefetched).  Main: "Copy from pinned host memory (cudaMallocHost ...)" -- the program made no copy."""
    path = str(tmp_path / "report4.sqlite")
    truth = nx.write_managed_kernel(path, blocks=262_144, threads=256, kernel_ms=110.0, faults_in_kernel=2000,
                                    fault_us=25.0, readback_bursts=20, fill_ms=100.0)
    rep = first_report(path)
    f = next(f for f in rep["findings"] if f["rule"] == "excessive_memcpy")
    assert f["severity"] in ("warning", "critical")
    assert "Unified Memory page migrations" in f["summary"]
    assert "cudaMemPrefetchAsync" in f["actions"][0]["text"]
    assert not any("cudaMallocHost" in a["text"] for a in f["actions"])  # nothing to pin: the driver made the copies
    # the kernel's wait on its pages is counted once, and no part exceeds its whole
    host = rep["hosts"][0]
    table = host["memcpy"]
    col = {c: i for i, c in enumerate(table["columns"])}
    h2d = next(r for r in table["rows"] if r[col["direction"]] == "h2d")
    # the kernel's wait is kernel time in a column of its own; "exposed" is copy time no kernel ran beside, the
    # ledger's (h37-marks68: the wait was "exposed" copy time, capped at the copies' own)
    assert h2d[col["kernel page wait ms/step"]] == pytest.approx(truth["paging_in_kernel_ms"], rel=0.02)
    assert h2d[col["exposed ms/step"]] == pytest.approx(host["breakdown_ms"]["memcpy_h2d"], abs=1e-4)
    assert h2d[col["exposed ms/step"]] <= h2d[col["ms/step"]] + 1e-6
    blocking = f["metric"]["detail"]["blocking_ms_per_step"]
    want = truth["paging_in_kernel_ms"] + truth["dtoh_migration_ms"]  # the readback runs with no kernel
    assert blocking == pytest.approx(want, rel=0.05)
    assert f["saving"]["ms_per_step"] <= host["gpus"][0]["step_ms"]
