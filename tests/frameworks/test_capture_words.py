"""PyTorch's capture advice asks the report's job what it is (issue #37, h37-left28): a one-process job is told
nothing of ranks, GPU work of no known kind loops its own step rather than a training step, an inference job
profiles its forward passes, and a job of several ranks keeps "one trace per rank".

The kept wild captures' truths (tests/fixtures/wild/PROVENANCE.md): mi210_gpu_only, amd_mi250 and
ddp_mi300x_nopool are one process on one GPU with no collective (the last despite its folder's name: its script is
``train_single_gpu.py``); compiled_a100_triton one Triton kernel's test; hf_qwen_h100 a forward under
``inference_mode``; ddp_a100_nccl a DDP rank with NCCL AllReduces; cpu_only_gloo a gloo rank of 300, CPU only."""

from __future__ import annotations

import pytest

from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.frameworks import pytorch
from tb_gpu_advisor.report.render import to_text
from tests.support.paths import FIXTURES
from tests.support.report_store import session_report

WILD = FIXTURES / "wild"
PER_RANK = "one trace per rank"
TRAINING = "train_step("


def _text(run: str) -> str:
    """The text report of one kept wild capture."""
    (s,) = [s for s in discover(str(WILD)) if s.run == run]
    return to_text(session_report(s))


@pytest.mark.parametrize("run", ["mi210_gpu_only", "amd_mi250", "ddp_mi300x_nopool", "compiled_a100_triton"])
def test_a_one_process_job_is_told_nothing_of_ranks(run):
    """One process that talks to no other has no rank to trace: its capture advice read "one trace per rank"."""
    text = _text(run)
    assert "capture a few steady-state steps" in text  # the advice is there, in its one-process words
    assert PER_RANK not in text


def test_work_of_no_known_kind_loops_its_own_step():
    """compiled_a100_triton's job is "GPU work of an unknown kind": no training step to loop (it read
    ``train_step(x, y)``)."""
    text = _text("compiled_a100_triton")
    assert "GPU work of an unknown kind" in text
    assert "run_one_step()" in text and TRAINING not in text


def test_an_inference_job_profiles_its_forward_passes():
    """Control (passes on main too): hf_qwen_h100's forward under inference_mode reads no training words."""
    text = _text("hf_qwen_h100")
    assert "profile several forward passes" in text
    assert TRAINING not in text and PER_RANK not in text


@pytest.mark.parametrize("run", ["ddp_a100_nccl", "cpu_only_gloo"])
def test_a_rank_of_a_job_keeps_one_trace_per_rank(run):
    """Controls: a DDP rank (NCCL AllReduces) is told to trace every rank, and so is a CPU-only gloo rank (rank 34
    of 300: no GPU process counted, gloo's all_reduce on the host)."""
    assert PER_RANK in _text(run)
    assert TRAINING in _text("ddp_a100_nccl")


def test_the_words_follow_the_tags_in_every_fix_that_quotes_the_advice():
    """``Framework.for_job``: each tag's words reach the snippet and every capture fix quoting it; the general
    framework keeps its own."""
    fw = pytorch.FRAMEWORK
    assert PER_RANK in fw.capture_snippet and TRAINING in fw.capture_snippet
    assert len(_advice(fw, PER_RANK)) >= 4 and len(_advice(fw, TRAINING)) >= 4
    alone = fw.for_job(("alone",))
    assert PER_RANK not in alone.capture_snippet and not _advice(alone, PER_RANK)
    # one process may still train (against the framework as a job with no tag reads it: its own `@tag` keys, the
    # cold start's loop among them, are no fix of such a job)
    assert len(_advice(alone, TRAINING)) == len(_advice(fw.for_job(()), TRAINING))
    any_work = fw.for_job(("any_work",))
    assert TRAINING not in any_work.capture_snippet and not _advice(any_work, TRAINING)


def _advice(fw, words: str) -> list[str]:
    """The fixes' snippets that quote the capture advice (a torch.profiler schedule's loop) with ``words``."""
    return [a.snippet for v in fw.fixes.values() for a in v
            if a.snippet and "tensorboard_trace_handler" in a.snippet and words in a.snippet]
