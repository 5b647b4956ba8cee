"""A copy to the GPU whose op asked for ``non_blocking=True`` is not told to add it (``capture.applied``'s
``non_blocking_h2d``); its fixes keep the pinning, the flag's lines marked "as already".

A copy from pageable memory holds the host whatever its call asked: the driver stages it inside ``cudaMemcpyAsync``.
So the copy's own record (``Memcpy HtoD (Pageable -> Device)``, a long ``cudaMemcpyAsync``) cannot tell a loop that
passes ``non_blocking=True`` from one that does not.  A PyTorch trace recorded with ``record_shapes`` can: the
``aten::copy_`` whose ``External id`` the copy carries records its inputs, ``Concrete Inputs`` ``["", "", "True"]``
(h37-nonblock33: ``wild/loader_pass_rtx5070ti``'s batch ``x.to('cuda', non_blocking=True)`` was told "copy them with
non_blocking=True" twice).  Truth by construction: the generator's pageable batch loop with the flag recorded True,
and its control with the flag recorded False (a ``cudaStreamSynchronize`` after the copy), still told to add it.
"""

from __future__ import annotations

from synthetic import torchtrace
from tb_gpu_advisor.frameworks import pytorch
from tests.support.paths import FIXTURES
from tests.support.properties import in_use_problems
from tests.support.run_report import run_report

_ALREADY = "copies to the GPU called with non_blocking=True"


def _host(folder, run):
    (h,) = run_report(folder, run).hosts
    return h


def _flag_lines(h) -> list[str]:
    """The code lines of the host's fixes that copy an upload non_blocking."""
    return [ln for f in h.findings for a in f.actions for ln in (a.snippet or "").splitlines()
            if "non_blocking=True" in ln]


def _texts(h) -> list[str]:
    return [" ".join(a.text.split()) for f in h.findings for a in f.actions]


def _still_pinned(h) -> None:
    """The pinning stays advised: the copies are pageable."""
    memcpy = next(f for f in h.findings if f.rule == "excessive_memcpy")
    assert any("pinned" in a.text for a in memcpy.actions)


def test_a_non_blocking_pageable_batch_is_told_to_pin_not_to_add_the_flag(tmp_path):
    torchtrace.write_run(str(tmp_path), torchtrace.PAGEABLE_NON_BLOCKING_INPUT, run="nb")
    h = _host(tmp_path, "nb")
    assert "non_blocking_h2d" in h.capture["applied"]
    assert "pinned_async_h2d" not in h.capture["applied"]
    assert pytorch.NON_BLOCKING.text not in _texts(h)
    assert not any("copy them with non_blocking=True" in t for t in _texts(h))
    assert _flag_lines(h) and all("as already: non_blocking=True" in ln for ln in _flag_lines(h))
    assert not in_use_problems(h.host, h)
    _still_pinned(h)


def test_control_a_blocking_pageable_batch_is_still_told_the_flag(tmp_path):
    """The same loop, its ``copy_`` recorded with ``non_blocking`` False: the flag stays advised."""
    torchtrace.write_run(str(tmp_path), torchtrace.PAGEABLE_BLOCKING_INPUT, run="blocking")
    h = _host(tmp_path, "blocking")
    assert "non_blocking_h2d" not in (h.capture.get("applied") or {})
    assert any("copy them with non_blocking=True" in t for t in _texts(h))
    assert not any("as already" in ln for ln in _flag_lines(h))


def test_the_copy_ops_flag_is_read_from_its_recorded_inputs():
    assert pytorch.copy_non_blocking({"Concrete Inputs": ["", "", "True"]}) is True
    assert pytorch.copy_non_blocking({"Concrete Inputs": ["", "", "False"]}) is False
    assert pytorch.copy_non_blocking({"Input Dims": [[8], [8], []]}) is None  # PyTorch < 1.10: no concrete inputs
    assert pytorch.FIX_REST["non_blocking_h2d"](pytorch.confirm_input(pytorch.TRAINING_LOOP)) is None


def test_real_non_blocking_pageable_batch_is_not_told_to_add_the_flag():
    """Read by hand: loader_pass_rtx5070ti's one ``Memcpy HtoD (Pageable -> Device)`` (4.8 MB, 329 us) carries
    ``External id`` 81249, that of ``aten::copy_`` with ``Concrete Inputs`` ``["", "", "True"]`` under
    ``aten::to(..., non_blocking=True)``; its ``cudaMemcpyAsync`` holds the host 707 us (pageable memory)."""
    h = _host(FIXTURES / "wild", "loader_pass_rtx5070ti")
    assert h.capture["applied"]["non_blocking_h2d"].startswith(_ALREADY)
    assert not any("copy them with non_blocking=True" in t for t in _texts(h))
    assert pytorch.NON_BLOCKING.text not in _texts(h)
    assert all("as already: non_blocking=True" in ln for ln in _flag_lines(h))
    assert not in_use_problems(h.host, h)  # "tokenise and copy ahead, pinned memory, non_blocking copies" on main
    _still_pinned(h)
