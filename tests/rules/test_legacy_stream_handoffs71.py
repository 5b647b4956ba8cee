"""Kernels on the legacy default stream beside kernels on a blocking stream take turns, and the idle at each handoff
is that stream's implicit order -- not an order "not in the capture" (issue #37 class 3, each wait to its cause;
h37-stream70's Left 2: only copies read the tie).

CUDA's legacy default stream (stream 0, the NULL stream) waits for all the work queued before it on every blocking
stream of its context (one made by ``cudaStreamCreate``, without ``cudaStreamNonBlocking``) and makes their later work
wait for it; a per-thread default stream orders itself against the legacy stream only, a non-blocking stream against
neither.  Nsight's ``TARGET_INFO_CUDA_STREAM`` states each stream's kind and context.  Before, the handoff finding
(``rules.capture_quality._handoff_cause``) said of such a loop "the capture records no event wait between the two
launches, so what orders the streams -- a library's own side stream, or a wait made on another thread -- is not in
it", with a fix that only said where to look.

Truth by construction: ``synthetic.nsysexport.write_alternating_streams`` -- a native loop whose kernels alternate
between stream 7 and stream 13, each launched while the other's runs and started 30 us after it ends, no event call
recorded.  Listed 7 NULL and 13 "Default stream" (blocking): the legacy stream orders them.  Controls: 13
non-blocking, 13 in another context, 7 fed by the per-thread calls (the per-thread default stream), or no table --
the order is none the capture states, the words as before.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.formats.nsys.reader import read_trace
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host, host_metrics

NULL, DEFAULT, NON_BLOCKING = 3, 1, 2
LEGACY_WORDS = "the legacy default stream (CUDA's NULL stream) is one of the two"
BEFORE_WORDS = "what orders the streams -- a library's own side stream, or a wait made on another thread -- is not in it"


def _export(tmp_path: Path, flags: dict[int, int] | None, context13: int = 1, per_thread: bool = False) -> Path:
    p = tmp_path / "r.sqlite"
    nx.write_alternating_streams(str(p), stream_flags=flags)
    con = sqlite3.connect(p)
    if context13 != 1:
        con.execute("UPDATE TARGET_INFO_CUDA_STREAM SET contextId = ? WHERE streamId = 13", (context13,))
    if per_thread:
        con.execute("UPDATE StringIds SET value = 'cudaLaunchKernel_ptsz_v7000' WHERE value = 'cudaLaunchKernel_v7000'")
    con.commit()
    con.close()
    return p


def _handoff(p: Path):
    m = host_metrics(read_trace(str(p)))
    return (m[0] if isinstance(m, tuple) else m).handoff


def _finding(p: Path):
    rep = analyze_host(HostFile(p.name, str(p), p.stat().st_size, 0, "nsys"))
    (f,) = [f for f in rep.findings if f.rule == "capture_quality" and f.title.endswith("handoffs between streams")]
    return f


def test_kernels_on_the_legacy_stream_and_a_blocking_one_are_ordered_by_it(tmp_path: Path) -> None:
    """Fails on base: no ``Handoff.legacy``; the words said the order is not in the capture."""
    p = _export(tmp_path, {7: NULL, 13: DEFAULT})
    assert _handoff(p).legacy is True
    f = _finding(p)
    assert LEGACY_WORDS in f.summary and BEFORE_WORDS not in f.summary, f.summary
    assert "cudaStreamNonBlocking" in f.actions[0].text and "per-thread" in f.actions[0].text, f.actions[0].text


@pytest.mark.parametrize(("flags", "context13", "per_thread"), [
    ({7: NULL, 13: NON_BLOCKING}, 1, False),
    ({7: NULL, 13: DEFAULT}, 2, False),
    ({7: NULL, 13: DEFAULT}, 1, True),
    (None, 1, False),
], ids=["non_blocking", "other_context", "per_thread", "no_table"])
def test_control_no_stated_legacy_order(tmp_path: Path, flags, context13: int, per_thread: bool) -> None:
    """Controls (their words pass on base): no legacy order stated, the words as before."""
    p = _export(tmp_path, flags, context13, per_thread)
    assert getattr(_handoff(p), "legacy", False) is False
    f = _finding(p)
    assert BEFORE_WORDS in f.summary and LEGACY_WORDS not in f.summary, f.summary
