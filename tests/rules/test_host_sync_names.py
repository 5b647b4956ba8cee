"""The syncs a finding counts are the syncs it names (issue #37 item 3: each wait belongs to its cause).

The real case (huy310304/PyTorch-CUDA-ML-Performance ``regression_shared_mem_profiling_individual_report.sqlite``
@4499457, no licence, so not kept: ``tests/fixtures/wild/SURVEY.md``, "Session 21: h37-survey41"): a hand-written
CUDA C++ linear regression on a Quadro RTX 4000 times each of its four kernels with ``cudaEventRecord`` and waits for
it (``cudaEventSynchronize``), waits for each epoch's closing event, and every ten epochs reads the loss back under a
``cudaDeviceSynchronize``.  Main's critical said "The host waits for the GPU 51 times per step (in runtime calls;
11.0 ms in the waits)": the syncs were named only by a framework op around them, and a program with no framework has
none, so the finding named no sync at all -- nor the one call to take out of the loop.

ASSUMPTION that was wrong: every sync is made inside an op the profiler records.  A native program's syncs, and a
framework program's bare ``torch.cuda.synchronize()``, are not; each is now named by its own call where nothing
encloses it.

By construction (``synthetic.nsysexport.write_event_timed_epochs``, the file's kernels and sync pattern): five
``cudaEventSynchronize`` an epoch, one ``cudaDeviceSynchronize`` every ten.  Control: a PyTorch capture whose sync lies
inside ``.item()``'s op keeps that op's name.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.cli import main as cli

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _host_sync(path: str, run: str | None = None) -> dict:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        cli.main(["report", path, "--format", "json", "--cache-dir", "off"] + (["--run", run] if run else []))
    report = json.loads(out.getvalue())
    report = report["reports"][0] if "reports" in report else report  # one run: the report itself
    found = [f for f in report["findings"] if f["id"].split(":")[0] == "host_sync"
             and f["metric"]["id"] == "sync_idle_share"]
    assert found, "the host waits after every kernel: the sync check must fire"
    return found[0]


def _named(f: dict) -> dict[str, float]:
    table = next(e for e in f["evidence"] if e["title"].startswith("Host events that wait"))
    return {name: per for name, per in table["rows"]}


@pytest.fixture(scope="module")
def epochs(tmp_path_factory) -> tuple[dict, dict]:  # noqa: ANN001
    path = str(tmp_path_factory.mktemp("regression") / "report.sqlite")
    truth = nx.write_event_timed_epochs(path)
    return truth, _host_sync(path)


def test_a_native_loops_syncs_are_named_by_their_own_calls(epochs) -> None:  # noqa: ANN001
    truth, f = epochs
    named = _named(f)
    for call, per_epoch in truth["syncs_per_epoch"].items():
        assert named.get(call) == pytest.approx(per_epoch, abs=0.05), (call, named)
    assert "cudaEventSynchronize ×5" in f["summary"]
    assert "runtime calls" not in f["summary"]


def test_the_names_account_for_every_sync_counted(epochs) -> None:  # noqa: ANN001
    _, f = epochs
    assert sum(_named(f).values()) == pytest.approx(f["metric"]["detail"]["syncs_per_step"], abs=0.05)


def test_an_offload_programs_stream_syncs_are_named(tmp_path) -> None:  # noqa: ANN001
    path = str(tmp_path / "report2.sqlite")
    nx.write_synced_kernels(path)
    f = _host_sync(path)
    assert _named(f) == {"cuStreamSynchronize": pytest.approx(f["metric"]["detail"]["syncs_per_step"])}


def test_control_a_sync_inside_an_op_keeps_the_ops_name() -> None:
    f = _host_sync(str(FIXTURES / "h200_jobs"), run="torch_compile_cudagraphs_inference")
    # named by the op the program called, ``.item()``'s ``aten::item``, not the ``aten::_local_scalar_dense`` inside
    # it (h37-probe44s)
    assert "aten::item ×1" in f["summary"]
    assert not any(name.startswith("cuda") for name in _named(f))


def test_a_loop_timing_each_kernel_is_told_to_read_the_events_after_it(epochs) -> None:  # noqa: ANN001
    """Five of the file's six syncs an epoch are ``cudaEventSynchronize`` after each timed kernel: the fix names the
    timing pattern (record in the loop, read ``cudaEventElapsedTime`` after it), not only device-wide syncs."""
    _, f = epochs
    text = " ".join(a["text"] for a in f["actions"])
    assert "cudaEventElapsedTime" in text and "cudaEventSynchronize" in text
