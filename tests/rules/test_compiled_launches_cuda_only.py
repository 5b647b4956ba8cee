"""A ``torch.compile``d call profiled with CUDA activity only is no Python launcher's (h37-inuse63, issue #37: captures
unlike ours).

The course's A10G capture ``induction_trace.json`` (Aldo-Zhang/CS521-mp2-private @9fa3c0d; no licence, read in place,
not kept): ``activities=[ProfilerActivity.CUDA]`` around a compiled conv's first call -- no op, no range, only the
runtime's calls, Inductor's three ``triton_poi_fused_*`` kernels launched by ``cuLaunchKernel``.  Base read those three
driver launches as "outside every ATen op", so a Python launcher's (Triton's JIT outside torch.compile), and told
"call the Triton kernels from a torch.compile'd function" beside its own "torch.compile (Inductor's Triton kernels in
the trace)" in ``capture.applied``: the ``in-use`` property broken, on the real file and on
``synthetic.torchtrace.write_cuda_only_first_call`` (its CUDA form; the ROCm forms escaped only because HIP's calls were
no dispatch of PyTorch's).

The wrong assumption: a thread whose runtime calls are recorded records its ops too.  A launch is outside every op only
where the thread records ops at all; the runtime's own calls are no such record.  Truth by construction: the generator
writes no op, and its Triton kernels are Inductor's.  The control (the launcher's own capture with its ops,
``write_python_launcher``) keeps its launcher words: tests/rules/test_python_launcher.py."""

from __future__ import annotations

import pytest

from synthetic.torchtrace import VENDOR_FORMS, VENDOR_WINDOWS, write_vendor_windows


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    from tb_gpu_advisor.discover.logdir import discover
    from tests.support.report_store import session_report

    out = tmp_path_factory.mktemp("first_call")
    write_vendor_windows(str(out), writers=("write_cuda_only_first_call",))
    return {s.run: session_report(s) for s in discover(str(out))}


@pytest.mark.parametrize("form", VENDOR_FORMS)
def test_compiled_first_call_is_not_told_torch_compile_again(reports, form):
    """Fails on base for ``cuda``: ``unexplained_idle#unrecorded`` named 2.65 s "a Python launcher's own time" and
    told torch.compile, which the capture shows in use."""
    from tests.support.properties import in_use_problems

    (h,) = reports[f"{form}_cuda_only_first_call"].hosts
    assert "compiled" in (h.capture or {}).get("applied", {})  # the capture shows torch.compile: the law has a key
    assert in_use_problems(form, h) == []
    for f in h.findings:
        assert not (f.metric and (f.metric.detail or {}).get("launcher_ms")), f.id
        assert "Python launcher" not in f.summary, f.summary


def test_the_property_walk_holds_the_first_call():
    """The property walk's windows on each vendor's GPU (``corpus_vendors``) hold this generator, so every property
    covers it (fails on base: words63 left it out, its CUDA form breaking ``in-use``)."""
    assert "write_cuda_only_first_call" in VENDOR_WINDOWS
