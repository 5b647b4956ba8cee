"""What an all-to-all exchanges, read from the work beside it on its GPU (issue #37 class 3, h37-a2afix): the fix of
an exposed all-to-all follows it.  Main gave every PyTorch all-to-all TorchRec's pipeline of embedding batches, an
MoE's token exchange (DeepEP, or NCCL between a router's top-k and the experts' grouped GEMM) and sequence
parallelism's head exchange around attention too.

Real traces: the recommenders of ``tests/fixtures/wild`` (FBGEMM's lookups beside their all-to-all) read embeddings,
as they must keep TorchRec's fix; the Ulysses training pair of ``../shared/profiles/nsys`` (FlashAttention beside
it) reads sequence.  A job with no all-to-all names no exchange."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tb_gpu_advisor import formats
from tb_gpu_advisor.devices import collectives
from tb_gpu_advisor.job.exchange import exchange_kind, tagged_exchange
from tb_gpu_advisor.model.columns import index_dtype
from tb_gpu_advisor.model.trace import device_launches
from tests.support.paths import FIXTURES, SHARED_PROFILES

WILD = FIXTURES / "wild"


def _kind(path, fmt: str = "kineto") -> str | None:
    t = formats.read(SimpleNamespace(path=str(path), host="h", format=fmt))
    return exchange_kind(t, device_launches(t.h, t.devices, index_dtype(len(t.h))))


@pytest.mark.parametrize("run", ["dlrm_a100_alltoall", "torchrec_a100_stalls", "torchrec_shampoo_128", "d2d_v100"])
def test_control_a_recommenders_all_to_all_exchanges_embeddings(run: str) -> None:
    """FBGEMM's lookups (``split_embedding_codegen_*``, ``permute_pooled_embs``) sit beside each all-to-all: the
    exchange is the embeddings', whose fix (TorchRec's pipeline) these captures keep."""
    (path,) = sorted((WILD / run).glob("*.pt.trace.json.gz"))
    assert _kind(path) == "embeddings"


def test_control_a_job_without_all_to_all_names_no_exchange() -> None:
    """``ddp_a100_nccl``: DDP's all-reduces only -- no exchange to name, no tag."""
    (path,) = sorted((WILD / "ddp_a100_nccl").glob("*.pt.trace.json.gz"))
    assert _kind(path) is None


ULYSSES = SHARED_PROFILES / "nsys" / "fsdp_mfu_before" / "mfu_2gpu_before.sqlite"


@pytest.mark.skipif(not ULYSSES.exists(), reason="../shared/profiles absent")
def test_a_ulysses_all_to_all_beside_attention_exchanges_sequence() -> None:
    """GindaChen/nsys-ai's FSDP + Ulysses training window (2 ranks): FlashAttention runs beside its all-to-alls, so
    the exchange is sequence parallelism's -- main had no reading, and would have told TorchRec's pipeline."""
    assert _kind(ULYSSES, "nsys") == "sequence"


@pytest.mark.parametrize("name, kind", [
    ("void split_embedding_codegen_forward_unweighted_kernel<float, float, int>(...)", "embeddings"),
    ("void fbgemm_gpu::permute_indices_weights_kernel<true, int, float>(...)", "embeddings"),
    ("void at::native::sbtopk::gatherTopK<float, unsigned int, 2, false>(...)", "experts"),
    ("fused_moe_kernel", "experts"),
    ("void cutlass::device_kernel<dpsk::grouped_gemm::cuda::m_grouped_fp8_ptp128c::GemmKernel>(...)", "experts"),
    ("void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>(Flash_fwd_params)", "sequence"),
    ("fmha_fwd_hd128_bf16_causal", "sequence"),
    # controls: a rotary *embedding* is attention's arithmetic, no table lookup; a dense GEMM says nothing
    ("void vllm::rotary_embedding_kernel<c10::BFloat16, true>(...)", None),
    ("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT", None),
])
def test_what_a_kernel_beside_an_all_to_all_says(name: str, kind: str | None) -> None:
    assert collectives.exchange_of(name) == kind


def test_deepep_names_its_exchange_by_its_library() -> None:
    """DeepEP moves only an MoE's tokens: its family says experts whatever runs beside it; NCCL's says nothing."""
    assert collectives.family("void deep_ep::intranode::dispatch<8, 768, 4>(int4*)").exchange == "experts"
    assert collectives.family("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)").exchange is None


def test_the_tag_carries_the_kind() -> None:
    assert tagged_exchange(("inference", "exchange_sequence")) == "sequence"
    assert tagged_exchange(("inference", "tensor_parallel")) is None
