"""A copy that held the thread feeding a GPU is that GPU's wait, whichever GPU its record names (h37-survey70, issue #37
class 3: each wait belongs to its cause; no part of the step booked as a cause it is not).

The wrong assumption (``metrics.breakdown.category_intervals``, ``metrics.context._shares``): *a copy-only GPU beside
an active one is no part of the active GPU's step* -- its copies were left out of every ledger, so the active GPU's
idle while its launching thread sat blocked in the copy's call read as dispatch overhead.  PyTorch's pinned-memory
recipe on an RTX 2080 Ti host of four GPUs (Abenich7/CPU-GPU-inference-2024---V2, no licence: read in place, not
kept): a 21 MB pageable ``x.to('cuda')`` whose ``cudaMemcpyAsync`` held the host 4.49 ms while its transfer ran
4.33 ms, recorded on "GPU 2", then two multiplies of the copied tensor on GPU 0 -- the process ran nothing else on
GPU 2.  Main: "Launch-bound: the GPU waits for the host to dispatch each op (saves ~2.31 ms, 47%)", CUDA graphs, and
"Copies block the GPU for 0 us".  ``metrics.breakdown.copies_holding_launcher`` books, on an active GPU, the part of
a copy-only GPU's transfers that ran while their calls held a thread launching its work.

Generator: :func:`synthetic.torchtrace.write_upload_elsewhere`, truth by construction; its control records the copy
on the kernels' GPU, where the ledger already booked it.
"""

from __future__ import annotations

import dataclasses

import pytest

from synthetic.torchtrace import write_upload_elsewhere
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.run_report import one_file_host


def _run(tmp_path, copy_gpu: int, staging_us: float = 0.0):
    path = tmp_path / f"upload_{copy_gpu}.pt.trace.json"
    truth = write_upload_elsewhere(str(path), copy_gpu=copy_gpu, staging_us=staging_us)
    m = host_metrics(read_trace(str(path)))
    return truth, (m[0] if isinstance(m, tuple) else m), one_file_host(str(path), "kineto")


@pytest.mark.parametrize("copy_gpu", [2, 0])
def test_a_blocking_upload_recorded_on_a_copy_only_gpu_is_the_copy_time_of_the_gpu_it_held(tmp_path, copy_gpu):
    truth, m, host = _run(tmp_path, copy_gpu)
    # main, copy_gpu 2: memcpy_h2d 0.0 and launch_wait ~3.9 ms a step -- the transfer booked as dispatch overhead
    assert m.breakdown.memcpy_h2d == pytest.approx(truth["copy_ms"], rel=0.01), m.breakdown
    assert m.breakdown.launch_wait < 0.1 * truth["copy_ms"], m.breakdown
    top = host["findings"][0]
    assert top["rule"] == "excessive_memcpy", [f["title"] for f in host["findings"]]
    assert not any(f["rule"] == "launch_bound" for f in host["findings"]), [f["title"] for f in host["findings"]]


def test_a_copy_only_gpu_stays_out_of_the_gpus_that_share_the_step(tmp_path):
    # the copy is booked where it held the launcher, once: the copy-only GPU keeps no share of the host's numbers
    _, m, host = _run(tmp_path, 2)
    assert [g["gpu"] for g in host["gpus"]] == [0], host["gpus"]
    (gpu,) = host["gpus"]
    assert sum(dataclasses.astuple(m.breakdown)) == pytest.approx(gpu["step_ms"], rel=0.01)  # one ledger, no part over


def test_the_staging_before_a_copy_only_gpus_transfer_is_the_copys_as_on_the_kernels_gpu(tmp_path):
    # the call holds the launcher 250 us before its transfer begins (the 2080 Ti upload: 246 us): the copies finding
    # claims that lead (``metrics.syncs.copy_leads``) as it does where the record names the kernels' GPU (the
    # control; the loop's sync before it claims the first part of the idle in both), and no launch-bound is left
    for sub in ("0", "2"):
        (tmp_path / sub).mkdir()
    _, control, _ = _run(tmp_path / "0", 0, staging_us=250.0)
    truth, m, host = _run(tmp_path / "2", 2, staging_us=250.0)
    # main: 0.0 -- the lead was the next launch's wait
    assert m.syncs.copy_lead_ms_per_step == pytest.approx(control.syncs.copy_lead_ms_per_step, rel=1e-6)
    assert 0.0 < m.syncs.copy_lead_ms_per_step <= truth["staging_ms"], m.syncs
    top = host["findings"][0]
    assert top["rule"] == "excessive_memcpy", [f["title"] for f in host["findings"]]
    assert "before the transfers begin" in top["summary"], top["summary"]
    assert not any(f["rule"] == "launch_bound" for f in host["findings"]), [f["title"] for f in host["findings"]]
