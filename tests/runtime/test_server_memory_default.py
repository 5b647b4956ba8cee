"""A shared TensorBoard's analyses get a protective memory limit by default (issue 27 item 17).

Before: every worker process of the tab could take half the machine's memory (up to 32 GiB) and read profiles up to
8 GiB: a 2.4 GB-uncompressed PyTorch trace was analysed to the end in a shared TensorBoard, 5.9 GB and 3 minutes.
Now a server's worker (``isolation.Limits.from_env``: the tab, the MCP server) defaults to a quarter of the memory,
2-4 GiB, and to profiles up to half of that, refused before they are read (a gzip trace by the size its trailer
declares, when its first MB agrees); since issue #39 the command line too (it had half, 2-32 GiB, and 8 GiB files:
tests/cli/test_cli_limits_one_rule.py); ``TB_GPU_ADVISOR_WORKER_MEMORY_MB`` and
``TB_GPU_ADVISOR_MAX_PROFILE_BYTES`` set them; the errors say how to raise them.
"""

from __future__ import annotations

import io
import os

import pytest

from tb_gpu_advisor.runtime import guard, isolation

GiB = 1 << 30


def _machine(monkeypatch, total_bytes: int) -> None:
    page = 4096
    real = os.sysconf
    monkeypatch.setattr(guard.os, "sysconf", lambda name: page if name == "SC_PAGE_SIZE" else
                        (total_bytes // page if name == "SC_PHYS_PAGES" else real(name)))
    monkeypatch.delenv(guard.ENV_MEMORY, raising=False)


@pytest.mark.parametrize("total_gib,server_gib", [(4, 2), (8, 2), (16, 4), (64, 4), (512, 4)])
def test_server_workers_default_to_a_quarter_of_the_memory_at_most_4_gib(monkeypatch, total_gib, server_gib):
    _machine(monkeypatch, total_gib * GiB)
    assert guard.memory_limit_from_env(server=True) == server_gib * GiB
    assert isolation.Limits.from_env().memory_bytes == server_gib * GiB  # what the tab's workers get
    # issue #39: the command line's own analysis has the same rule (it had half the machine, 2-32 GiB)
    assert guard.memory_limit_from_env(server=False) == guard.memory_limit_from_env() == server_gib * GiB


def test_the_environment_sets_both(monkeypatch):
    _machine(monkeypatch, 64 * GiB)
    monkeypatch.setenv(guard.ENV_MEMORY, "12000")
    assert guard.memory_limit_from_env(server=True) == guard.memory_limit_from_env() == 12000 << 20
    monkeypatch.setenv(guard.ENV_MEMORY, "0")
    assert isolation.Limits.from_env().memory_bytes is None


def test_a_worker_started_for_the_tab_runs_under_the_server_default(monkeypatch):
    """The limit the child really has (its RLIMIT_AS), started as the tab starts it, with no setting."""
    monkeypatch.delenv(guard.ENV_MEMORY, raising=False)
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    expected = max(2 * GiB, min(4 * GiB, total // 4))
    assert isolation.call(_child_limit) == expected
    assert expected == guard.memory_limit_from_env()  # the command line's: one rule (issue #39)


def _child_limit(progress=None) -> int | None:
    return guard.current_limit()


def _child_profile_limit(progress=None) -> int:
    from tb_gpu_advisor.formats.base import max_profile_bytes

    return max_profile_bytes()


def test_a_server_worker_reads_profiles_up_to_half_its_memory_unless_told(monkeypatch):
    from tb_gpu_advisor.formats.base import ENV_MAX_BYTES

    monkeypatch.delenv(ENV_MAX_BYTES, raising=False)
    monkeypatch.setenv(guard.ENV_MEMORY, "3000")
    assert isolation.call(_child_profile_limit) == (3000 << 20) // 2
    monkeypatch.setenv(ENV_MAX_BYTES, "12345")  # the user's word wins
    assert isolation.call(_child_profile_limit) == 12345


def _big_gzip_trace(path, copies: int = 25) -> int:
    """A valid PyTorch trace of ``copies`` x the wild fixture's events (19 MB of text, 2 MB of gzip: more than the 1 MB
    sample); its text size."""
    import gzip
    import json

    from tests.support.paths import FIXTURES

    doc = json.loads(gzip.decompress((FIXTURES / "wild" / "amd_mi300x" / "bert_small.pt.trace.json.gz").read_bytes()))
    doc["traceEvents"] = doc["traceEvents"] * copies
    text = json.dumps(doc).encode()
    path.write_bytes(gzip.compress(text, compresslevel=1))
    return len(text)


@pytest.mark.parametrize("gz", [True, False], ids=["gzip", "plain"])
def test_a_trace_over_the_limit_is_refused_before_it_is_read(tmp_path, monkeypatch, gz):
    """The refusal names the size and how to raise the limit, and comes before the parser reads any event: the
    file's bytes are not read beyond the first MB (a counting stream)."""
    import gzip

    from tb_gpu_advisor.formats.kineto.parse import KinetoReadError, parse_trace

    path = tmp_path / "t.pt.trace.json.gz"
    size = _big_gzip_trace(path)
    if not gz:
        path.write_bytes(gzip.decompress(path.read_bytes()))
    reads = []

    class Counting(io.FileIO):
        def read(self, n=-1):
            data = super().read(n)
            reads.append(len(data))
            return data

    limit = size // 3
    with pytest.raises(KinetoReadError) as e, Counting(str(path), "rb") as f:
        parse_trace(f, max_bytes=limit)
    message = str(e.value)
    assert "over the" in message and "TB_GPU_ADVISOR_MAX_PROFILE_BYTES" in message and "WORKER_MEMORY_MB" in message
    assert f"trace is {_human(size)}" in message, message  # the size is known up front, not "over the limit"
    assert sum(reads) <= (1 << 20) + 8, sum(reads)
    with Counting(str(path), "rb") as f:  # under the limit: read as before
        assert len(parse_trace(f, max_bytes=size * 2)) > 0


def _human(n: int) -> str:
    from tb_gpu_advisor.formats.base import human_size

    return human_size(n)


def test_a_cut_off_gzip_trace_is_never_refused_on_its_last_bytes(tmp_path):
    """A gzip trace cut mid-write ends in arbitrary bytes, not a size: it is read up to the cut, as before."""
    from tb_gpu_advisor.formats.kineto.parse import parse_trace

    path = tmp_path / "t.pt.trace.json.gz"
    size = _big_gzip_trace(path)
    data = path.read_bytes()
    for frac in (0.3, 0.5, 0.8):
        cut = tmp_path / f"cut{frac}.gz"
        cut.write_bytes(data[: int(len(data) * frac)] + b"\xff\xff\xff\x7f")  # as if it declared 2 GiB
        kt = parse_trace(str(cut), max_bytes=size)
        assert kt.truncated and len(kt) > 0


def test_the_out_of_memory_error_says_how_to_raise_the_limit():
    message = guard.out_of_memory_message(4 * GiB)
    assert message.startswith("ran out of memory (worker limit 4096 MB; raise TB_GPU_ADVISOR_WORKER_MEMORY_MB, in MB,")
    assert "TensorBoard" in message and "0 for no limit" in message
