"""Exposed collectives of tensor parallelism get tensor parallelism's fix, not FSDP's (issue #37, survey h37-survey16).

tugot17/tokenomics-from-first-principles' ``traces/llama_trace_4layers0_dim_1024.json`` (MIT; kept as
``wild/tp_rtx4090_cold_forward``) is rank 0 of a 4-layer Llama under DTensor tensor + sequence parallelism
(``parallelize_module``), one forward: 9 ReduceScatter and 10 AllGather move the activations between each layer's
shards (39 ``Redistribute`` ops, no FSDP hook).  Main told it to prefetch FSDP's all-gathers -- a wrapper the job never
used -- because the most exposed collective was a ReduceScatter.  The collectives' cause is in the trace: DTensor's
redistributions, so the fix is tensor parallelism's (overlap them with the matmuls they feed, move fewer bytes)."""

from __future__ import annotations

from pathlib import Path

from synthetic.torchtrace import write_run
from tests.support.cli_report import cli_reports

WILD = Path(__file__).resolve().parents[1] / "fixtures" / "wild"


def _comm_fix(path) -> str:
    findings = [f for r in cli_reports(path) for f in r["findings"] if f["rule"] == "comm_exposed"]
    assert findings, "no comm_exposed finding"
    return " ".join(a["text"] + " " + (a.get("snippet") or "") for a in findings[0]["actions"])


def test_dtensor_collectives_get_the_tensor_parallel_fix():
    text = _comm_fix(WILD / "tp_rtx4090_cold_forward")
    assert "Tensor parallelism (DTensor)" in text and "_micro_pipeline_tp" in text, text
    assert "FSDP" not in text, text


def test_fsdp_collectives_keep_the_fsdp_fix(tmp_path):
    """Control: FSDP's all-gathers without prefetch (no DTensor redistribution) keep FSDP's prefetch fix."""
    write_run(str(tmp_path), "fsdp_no_prefetch", steps=6)
    text = _comm_fix(tmp_path / "fsdp_no_prefetch")
    assert "FSDP" in text and "Tensor parallelism" not in text, text
