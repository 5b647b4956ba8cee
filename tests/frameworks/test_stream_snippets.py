"""A PyTorch fix whose code makes a tensor on a side stream and uses it on the current one records that use
(``Tensor.record_stream``): the caching allocator frees a block to the stream that allocated it, so without the record
the next copy on the side stream may overwrite a batch the kernels still read (PyTorch's CUDA semantics notes).

h37-review61b: h37-copystream61's ``PREFETCH_AHEAD`` and ``PREFETCH_AHEAD_INPUT`` -- the fixes of copies already on a
stream of their own -- waited on the copy stream and used its tensors with no ``record_stream``, where the side-stream
fixes beside them (``PREFETCH_BATCH``, ``PREFETCH_INPUT``) record it (fails on d6d17f28).
"""

from __future__ import annotations

from tb_gpu_advisor.frameworks import pytorch
from tb_gpu_advisor.model.schema import Action


def _side_stream_fixes() -> dict[str, Action]:
    """The module's fixes whose code makes the current stream wait for another one (``wait_stream``)."""
    return {n: a for n, a in vars(pytorch).items() if isinstance(a, Action) and "wait_stream(" in (a.snippet or "")}


def test_a_tensor_made_on_a_side_stream_records_its_use_on_the_current_one() -> None:
    fixes = _side_stream_fixes()
    assert {"PREFETCH_BATCH", "PREFETCH_INPUT", "PREFETCH_AHEAD", "PREFETCH_AHEAD_INPUT"} <= set(fixes), sorted(fixes)
    missing = [n for n, a in fixes.items() if "record_stream(torch.cuda.current_stream())" not in a.snippet]
    assert missing == [], missing
