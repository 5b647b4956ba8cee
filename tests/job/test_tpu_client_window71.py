"""A window whose host sent work to a TPU -- XLA's TPU client's own events, no TPU plane -- is work on an accelerator
the Advisor does not analyse, not work on the CPU (h37-hunt71a, issue #37 class 1: a window with no GPU work).

The real capture, kept (Apache-2.0): volcengine/verl ``verl/~/profiles/plugins/profile/2025_06_30_23_53_59/
localhost_9012.xplane.pb`` (blob 32d9e0e9, committed in 2fd86ef6 "add tpu_utils comment, remove tpu availability
cache", 2025-07-01, refs/pull/2607/head; ``wild/tpu_client_verl_transfers``): a torch_xla ``ray::FusedWorker`` on a TPU
host, 4.5 s: 144 ``PjRtComputationClient::TransferToDevice`` of its weights (``TfrtTpuClient::BufferFromHostBuffer``,
``DeferredTpuAllocator::Allocate``, ``tpu::System::TransferToDevice`` on three ``pjrt-tpu-tasks`` threads, PjRt's
``H2D Dispatch``/``XlaLinearize``), 68 ``Transpose::Execute``; planes ``/host:CPU``, an empty ``/device:CUSTOM:
Megascale Trace`` and no ``/device:TPU``.  Base ea5a2537: "no GPU work [high: ... the host made no GPU runtime call:
the work ran on the CPU]", "No GPU activity ... If the job should use the GPU, move the model and its inputs there".
Control (passes on both): the same file with the TPU client's names taken out reads as work on the CPU."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.support.cli_report import cli_report

_RUN = Path(__file__).resolve().parents[1] / "fixtures" / "wild" / "tpu_client_verl_transfers"
_FILE = "plugins/profile/2025_06_30_23_53_59/localhost_9012.xplane.pb"


def test_a_window_of_xla_tpu_client_transfers_ran_on_a_tpu_not_the_cpu():
    host = cli_report(_RUN)["hosts"][0]
    ev = host["job"]["kind_evidence"]
    assert "TPU" in ev and "ran on the CPU" not in ev, ev
    (f,) = [f for f in host["findings"] if f["rule"] == "capture_quality" and f["severity"] == "warning"]
    assert "TPU" in f["summary"] and "move the model" not in f["summary"], f["summary"]


def test_control_without_the_tpu_clients_names_the_window_reads_as_work_on_the_cpu(tmp_path):
    raw = (_RUN / _FILE).read_bytes()
    for name, same in ((b"TfrtTpu", b"TfrtXyz"), (b"DeferredTpuAllocator", b"DeferredXyzAllocator"),
                       (b"tpu::System::", b"xyz::System::")):  # same lengths: the protobuf's framing holds
        raw = raw.replace(name, same)
    out = tmp_path / "run" / _FILE
    out.parent.mkdir(parents=True)
    out.write_bytes(raw)
    ev = cli_report(tmp_path / "run")["hosts"][0]["job"]["kind_evidence"]
    assert "ran on the CPU" in ev, ev
