"""A device event's kind is what the tracer recorded it as, its name saying only what the record leaves open
(h37-copydir31; issue #37 class 3, "one home for a copy's direction and kind").

Every reader took an event's kind from its name alone (``devices.device_kind``): a kernel the program named like a
copy (``Memcpy HtoD ...``, roctracer's ``CopyDeviceToHost``, a ``Memset...`` kernel) was booked as a copy or a fill
though the tracer recorded a kernel dispatch (Kineto's ``kernel`` category, Nsight's kernel table, an AMD tracer's
dispatch section), and a fill whose name says nothing was booked as compute though Kineto recorded ``gpu_memset``.
The wrong assumption: *an event's name says what ran* -- the tracer's record does; a name is a label.  Now
``devices.recorded_kinds`` takes the record first (the name refining a copy's direction, a kernel's being a
collective), and the readers of Kineto, Nsight, rocprof/rocprofv3/rocpd and rocmProfileData give it their record;
``job.period``'s uploads read the events' kinds, not their names.

Truth by construction: each capture is written twice by the same generator, once with honest names and once with a
kernel renamed to a copy's name (or a fill renamed to say nothing); the GPU ran the same work, so every ledger and the
steps must be the same.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from synthetic import autograd_nvtx as an
from synthetic import rocproftrace
from synthetic.torchtrace import write_filled_steps
from tb_gpu_advisor import devices
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.report_store import session_report

#: Names a kernel may carry that a name-reader takes for a copy or a fill (each a different vendor's word).
LYING_KERNEL_NAMES = ["Memcpy HtoD (Pinned -> Device)", "CopyDeviceToHost", "Memset_kernel", "MemcpyKernel"]


def _host(folder: str | Path) -> dict:
    (s,) = discover(str(folder))
    (h,) = session_report(s).to_dict()["hosts"]
    return h


def _ledgers(h: dict) -> list[dict]:
    """Every ledger of a host (the mean step, each GPU's, each step row's), rounded to a nanosecond."""
    books = [h["breakdown_ms"]] + [g["breakdown"] for g in h["gpus"]] + [r["breakdown"] for r in h["step_rows"]]
    return [{k: round(v, 6) for k, v in b.items() if v} for b in books]


def _copy_rows(h: dict) -> set[str]:
    t = h.get("memcpy")
    return set() if not t else {str(r[t["columns"].index("direction")]) for r in t["rows"]}


def test_recorded_kinds_take_the_record_over_the_name():
    names = ["Memcpy HtoD (Pinned -> Device)", "fill_buffer", "nvjet_gemm", "Memset (Device)", "ncclKernel_AllReduce"]
    rec = np.array([devices.RECORDED_KERNEL, devices.RECORDED_FILL, devices.RECORDED_TRANSFER, devices.RECORDED_NAME_ONLY,
                    devices.RECORDED_KERNEL, devices.RECORDED_TRANSFER], np.int8)
    name_id = np.array([0, 1, 2, 3, 4, 0])
    got = devices.recorded_kinds(names, name_id, rec).tolist()
    assert got == [devices.KIND_KERNEL,  # a kernel dispatch named like a copy
                   devices.KIND_MEMSET,  # a fill whose name says nothing
                   devices.KIND_OTHER_COPY,  # a copy whose name says no direction
                   devices.KIND_MEMSET,  # no record: the name decides, as before
                   devices.KIND_COLLECTIVE,  # a kernel's name still says it is a collective
                   devices.KIND_H2D]  # a copy's name says its direction


def _kineto_pair(tmp_path: Path, rename) -> tuple[dict, dict]:  # noqa: ANN001 - an event editor
    """The generator's filled MLP steps, honest and with ``rename`` applied to its events."""
    honest, lying = tmp_path / "honest", tmp_path / "lying"
    honest.mkdir()
    lying.mkdir()
    write_filled_steps(str(honest / "fill.pt.trace.json"))
    doc = json.loads((honest / "fill.pt.trace.json").read_text())
    for e in doc["traceEvents"]:
        rename(e)
    (lying / "fill.pt.trace.json").write_text(json.dumps(doc))
    return _host(honest), _host(lying)


@pytest.mark.parametrize("lie", LYING_KERNEL_NAMES)
def test_a_kineto_kernel_named_like_a_copy_is_a_kernel(tmp_path, lie):
    def rename(e: dict) -> None:
        if e.get("cat") == "kernel" and "reduce_kernel" in e.get("name", ""):
            e["name"] = lie

    honest, lying = _kineto_pair(tmp_path, rename)
    assert _ledgers(lying) == _ledgers(honest)  # main: the reduction's time booked as a copy or a fill
    assert _copy_rows(lying) == _copy_rows(honest) == {"memset"}


def test_a_kineto_fill_whose_name_says_nothing_is_a_fill(tmp_path):
    def rename(e: dict) -> None:
        if e.get("cat") == "gpu_memset":
            e["name"] = "fill_buffer"

    honest, lying = _kineto_pair(tmp_path, rename)
    assert honest["breakdown_ms"]["memset"] > 0  # the premise: the steps fill a buffer
    assert _ledgers(lying) == _ledgers(honest)  # main: the fill booked as compute


def _nsys_loop(path: str, lie: str | None) -> dict:
    """``autograd_nvtx``'s inference loop that never reads back (one upload an iteration, ``job.period._fed_calls``),
    its clamp kernel renamed ``lie`` in the export's string table."""
    an.write(path, "no_grad", steps=12, layers=1, readback=False)
    if lie is not None:
        with sqlite3.connect(path) as c:
            (sid,) = c.execute("SELECT k.shortName FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON "
                               "s.id = k.shortName WHERE s.value LIKE '%clamp%' LIMIT 1").fetchone()
            c.execute("UPDATE StringIds SET value = ? WHERE id IN (SELECT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL "
                      "WHERE shortName = ? UNION SELECT shortName FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE shortName = ?)",
                      (lie, sid, sid))
        c.close()
    host = SimpleNamespace(host="h0", path=path, format="nsys", size=os.path.getsize(path))
    return analyze_session("w", "s", [host]).to_dict()["hosts"][0]


def test_an_nsight_kernel_named_like_an_upload_leaves_the_loop_its_iterations(tmp_path):
    """The loop's iterations are read off its one upload a repeat; a kernel named ``Memcpy HtoD ...`` in the kernel
    table made two "uploads" a repeat on main, and the loop one pass."""
    honest = _nsys_loop(str(tmp_path / "honest.sqlite"), None)
    lying = _nsys_loop(str(tmp_path / "lying.sqlite"), "Memcpy HtoD staging kernel")
    assert honest["steps"]["source"] == "repeated_launches" and honest["steps"]["found"] == 12  # the premise
    assert (lying["steps"]["source"], lying["steps"]["found"]) == ("repeated_launches", 12)  # main: single_pass, 1
    assert _ledgers(lying) == _ledgers(honest)


@pytest.mark.parametrize("lie", ["CopyHostToDevice", "FillBuffer", "Memcpy DtoH"])
def test_a_rocprof_dispatch_named_like_a_copy_record_is_a_kernel(tmp_path, lie):
    """rocprof's dispatch section holds kernels only; its copy section holds the copies (roctracer's records)."""
    hosts = {}
    for tag, name in (("honest", "copy_kernel"), ("lying", lie)):
        (tmp_path / tag).mkdir()
        rocproftrace.write(str(tmp_path / tag / "results.json"), [[(name, 300.0), ("gemm_kernel", 200.0)]] * 6)
        hosts[tag] = _host(tmp_path / tag)
    assert _ledgers(hosts["lying"]) == _ledgers(hosts["honest"])  # main: 300 us a step of copies or fills
    assert _copy_rows(hosts["lying"]) == _copy_rows(hosts["honest"])
