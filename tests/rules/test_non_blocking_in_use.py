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

import gzip
import json

from synthetic import torchtrace
from tb_gpu_advisor.frameworks import pytorch
from tb_gpu_advisor.frameworks.base import refilled
from tb_gpu_advisor.frameworks.pytorch import PIN_MEMORY
from tb_gpu_advisor.model.schema import Action
from tests.support.paths import FIXTURES
from tests.support.properties import fix_twice_problems, in_use_problems
from tests.support.run_report import run_report

_ALREADY = "copies to the GPU called with non_blocking=True"
#: what a code line the trace shows done says beside it
_KEPT = "as already: non_blocking=True"


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


# h37-nonblock34: the flag in use is said once per finding -- its summary's "Already in use, so not suggested" --,
# never in each fix, and the fixes are composed from their templates, never reworded (CI failed both laws on
# nonblock33's merge: "the copies ask for non_blocking=true already" in two fixes of loader_pass's excessive_memcpy,
# and ``text.replace(asks, said)``)

def _once_per_finding(h) -> None:
    assert "non_blocking_h2d" in h.capture["applied"]
    assert not fix_twice_problems(h.host, h.findings)
    for f in h.findings:
        told = [a.text for a in f.actions if "already" in a.text and "non_blocking" in a.text]
        assert not told, (f.id, told)  # the summary says it, once
        if any(_KEPT in (a.snippet or "") for a in f.actions):
            assert f.summary.count(_ALREADY) == 1, f.summary


def test_real_finding_says_the_flag_in_use_once():
    """On 4df04bb4 (nonblock33): 'fix-twice: ... excessive_memcpy:resnet50_cuda_batch8_224 tells 'the copies ask for
    non_blocking=true already' in two of its fixes'; on main no ``non_blocking_h2d``."""
    h = _host(FIXTURES / "wild", "loader_pass_rtx5070ti")
    _once_per_finding(h)
    memcpy = next(f for f in h.findings if f.rule == "excessive_memcpy")
    assert sum("pin its batches" in a.text for a in memcpy.actions) == 1  # the pinning once: PIN_MEMORY's


def test_generator_finding_says_the_flag_in_use_once(tmp_path):
    torchtrace.write_run(str(tmp_path), torchtrace.PAGEABLE_NON_BLOCKING_INPUT, run="nb")
    h = _host(tmp_path, "nb")
    _once_per_finding(h)
    _still_pinned(h)
    bound = next(f for f in h.findings if f.rule == "input_bound")
    assert any("pin its batches" in a.text for a in bound.actions)  # the flag's fix less the flag: the pinning


def test_the_pinning_fix_is_refilled_from_its_template():
    """PIN_MEMORY as the rule fills it (``{copies}``), told as its template without the flag's clause, the rule's
    words kept; a text that is not the template filled is left alone."""
    copies = "the H2D copy of 4.8 MB in the pass"
    filled = PIN_MEMORY.text.format(copies=copies)
    rest = pytorch.FIX_REST["non_blocking_h2d"](Action(filled))
    assert rest is not None and copies in rest.text and "non_blocking" not in rest.text
    assert rest.text == refilled(filled, PIN_MEMORY.text, pytorch._pin_memory(""))
    assert refilled("Copy from somewhere else.", PIN_MEMORY.text, pytorch._pin_memory("")) is None
    assert refilled("a 1 b 1", "a {x} b {x}", "<{x}>") == "<1>" and refilled("a 1 b 2", "a {x} b {x}", "{x}") is None


def test_the_callers_flag_is_read_where_their_schema_puts_it():
    """``aten::to`` (its overloads of 5, 6 and 8 inputs) and ``aten::_to_copy`` pass ``copy_`` their own flag: read
    from each, it agrees with the ``copy_`` each holds on its thread, in loader_pass_rtx5070ti's recorded inputs (its
    batch's ``.to('cuda', non_blocking=True)`` True, every other copy False).  On main: no ``op`` to read by."""
    with gzip.open(FIXTURES / "wild" / "loader_pass_rtx5070ti" / "resnet50_cuda_batch8_224.35548.pt.trace.json.gz") as fh:
        ops = [e for e in json.load(fh)["traceEvents"] if e.get("cat") == "cpu_op" and pytorch.is_copy_op(e["name"])]
    copies = [e for e in ops if e["name"] == pytorch.COPY_OP]
    read = {True: 0, False: 0}
    for caller in (e for e in ops if e["name"] != pytorch.COPY_OP):
        inner = [c for c in copies if c["tid"] == caller["tid"] and caller["ts"] <= c["ts"] <= caller["ts"] + caller["dur"]]
        if not inner:  # a cast on the host: no copy_ under it
            continue
        flag = pytorch.copy_non_blocking(caller["args"], caller["name"])
        assert flag is not None and flag == pytorch.copy_non_blocking(inner[0]["args"]), caller
        read[flag] += 1
    assert read[True] >= 2 and read[False] >= 2, read  # the batch's aten::to and _to_copy; the other copies
