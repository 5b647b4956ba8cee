"""upb (protobuf's C parser) does not survive a failed allocation: it crashed a worker under its address-space limit
(a segfault in the server's robustness test), or reported "Arena alloc failed" as a DecodeError -- a file read as
damaged for want of memory.  The reader reserves room before each parse, so running out is a MemoryError the host's
report states (``common/memory.ensure_room_to_parse``)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tb_gpu_advisor.common import memory
from tb_gpu_advisor.formats.xplane import schema

REPO = str(Path(__file__).resolve().parents[2])

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc are Linux's")

_CHILD = textwrap.dedent("""
    import resource, sys
    import numpy  # noqa: F401 - loaded before the limit, as in every analysis process
    from tb_gpu_advisor.formats.xplane import schema
    line = schema.message_class("LazyLine")(id=1, name="stream", events=[b"\\x08\\x01\\x10\\x02"] * 200_000).SerializeToString()
    vm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmSize")) * 1024
    room = vm + len(line) // 10  # a tenth of the line's size free: far less than upb's parse needs
    resource.setrlimit(resource.RLIMIT_AS, (room, resource.getrlimit(resource.RLIMIT_AS)[1]))
    try:
        schema.parse("LazyLine", line)
    except MemoryError:
        print("MemoryError")
        sys.exit(0)
    print("parsed")
""")


def test_a_parse_without_room_is_a_memory_error_not_a_crash():
    """A 1.2 MB line with a tenth of that free: a clean MemoryError (exit code 0); upb alone raised a DecodeError."""
    r = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert r.returncode == 0 and r.stdout.strip() == "MemoryError", (r.returncode, r.stdout, r.stderr[-2000:])


def test_a_parse_with_room_reads_the_message():
    line = schema.message_class("LazyLine")(id=7, name="s", events=[b"\x08\x01"] * 1000).SerializeToString()
    msg = schema.parse("LazyLine", line)
    assert msg.id == 7 and len(msg.events) == 1000


def test_room_asked_grows_with_the_message(monkeypatch):
    asked = []
    monkeypatch.setattr(memory, "ensure_room_to_parse", asked.append)
    monkeypatch.setattr(schema, "ensure_room_to_parse", asked.append)
    schema.parse("LazyLine", b"\x08\x05")
    assert asked == [2]


def test_the_probe_maps_only_where_a_map_may_be_refused(monkeypatch):
    """The probe (an mmap and munmap a message, ~16 us: 37 ms of real-h100-jax/gpt_bf16's 173 ms analysis) runs
    where a limit can refuse upb's arena -- an address-space limit, strict overcommit, a message past
    ``UNREFUSED_MAP`` -- and nowhere else.  Fails on base: every message was probed."""
    maps = []

    class _Map:
        def __init__(self, fd, size):  # noqa: ANN001
            maps.append(size)

        def close(self):
            pass

    monkeypatch.setattr(memory.mmap, "mmap", _Map)
    monkeypatch.setattr(memory, "_OVERCOMMIT", [0])
    monkeypatch.setattr(memory.resource, "getrlimit", lambda _: (memory.resource.RLIM_INFINITY,) * 2)
    memory.ensure_room_to_parse(1000)
    assert maps == []
    memory.ensure_room_to_parse(memory.UNREFUSED_MAP)  # past the size no default overcommit refuses: probed
    assert len(maps) == 1
    monkeypatch.setattr(memory, "_OVERCOMMIT", [2])  # strict commit: any map may be refused
    memory.ensure_room_to_parse(1000)
    assert len(maps) == 2
    monkeypatch.setattr(memory, "_OVERCOMMIT", [0])
    monkeypatch.setattr(memory.resource, "getrlimit", lambda _: (1 << 40, memory.resource.RLIM_INFINITY))
    memory.ensure_room_to_parse(1000)  # a worker's address-space limit
    assert len(maps) == 3
