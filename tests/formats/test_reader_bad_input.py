"""Bad input never escapes the reader as anything but ProfileReadError naming the file.

Why: discovery hands the reader every ``*.xplane.pb`` it finds in a user's
logdir -- half-written captures, files truncated by a full disk, other
tools' outputs renamed by hand.  One bad file must turn into a clear
message for that file, never an IndexError or DecodeError that takes down
the whole report.  Truncations and corruptions start from a real TF 2.21
capture, so they hit the structures TensorFlow really writes.
"""

from __future__ import annotations

import gzip
import os
import random
import time
from pathlib import Path

import pytest

from tb_gpu_advisor.formats.xplane.reader import ProfileReadError, parse_timeline, read_timeline
from tests.support.paths import FIXTURES, REPO

REAL = FIXTURES / "real" / "tf221_cpu_custom_loop.xplane.pb"


@pytest.fixture(scope="module")
def real_bytes() -> bytes:
    return REAL.read_bytes()


def _write(tmp_path: Path, data: bytes, name: str = "host.xplane.pb") -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def _read_error(path: str, **kwargs) -> ProfileReadError:
    with pytest.raises(ProfileReadError) as info:
        read_timeline(path, **kwargs)
    err = info.value
    assert err.path == path
    assert str(err).startswith(f"{path}: ")  # the message names the file
    return err


def test_the_real_file_itself_reads(real_bytes):
    assert read_timeline(str(REAL)).num_events == 2256


def test_empty_file(tmp_path):
    err = _read_error(_write(tmp_path, b""))
    assert "empty" in err.reason


@pytest.mark.parametrize("fraction", [0.0001, 0.01, 0.25, 0.5, 0.9, 0.999])
def test_truncated_real_capture(tmp_path, real_bytes, fraction):
    cut = max(1, int(len(real_bytes) * fraction))
    err = _read_error(_write(tmp_path, real_bytes[:cut]))
    assert "truncated" in err.reason or "not an XSpace" in err.reason


def test_truncated_at_every_prefix_of_the_head_and_every_97th_byte(real_bytes):
    """Every cut raises ProfileReadError (a cut never yields a half-read profile silently)."""
    cuts = list(range(1, 300)) + list(range(300, len(real_bytes), 97))
    for cut in cuts:
        with pytest.raises(ProfileReadError):
            parse_timeline(real_bytes[:cut], path=f"cut{cut}")


def test_random_bytes(tmp_path):
    rng = random.Random(1234)
    for size in (1, 7, 100, 5000, 100_000):
        data = bytes(rng.randrange(256) for _ in range(size))
        _read_error(_write(tmp_path, data))


def test_text_files(tmp_path):
    for text in (b"hello\n", b'{"traceEvents": []}', b'planes {\n  name: "/host:CPU"\n}\n', b"\x00" * 64):
        err = _read_error(_write(tmp_path, text))
        assert "not" in err.reason


def test_gzipped_trace_renamed(tmp_path):
    _read_error(_write(tmp_path, gzip.compress(b'{"traceEvents": []}' * 50)))


def test_tensorboard_event_file(tmp_path):
    """A TFRecord-framed event file (what sits next to profiles) is not a profile."""
    demo = REPO / "demo_logs" / "real_tf_cpu_keras" / "train"
    event_file = next(demo.glob("events.out.tfevents.*"))
    _read_error(_write(tmp_path, event_file.read_bytes()))


def test_foreign_protobufs(tmp_path):
    """Other protobufs can be well-formed wire data; they still are not XSpace profiles."""
    from google.protobuf import descriptor_pb2
    from tensorboard.compat.proto import config_pb2, event_pb2, graph_pb2, summary_pb2

    fd = descriptor_pb2.FileDescriptorProto()
    descriptor_pb2.DESCRIPTOR.CopyToProto(fd)
    graph = graph_pb2.GraphDef()
    for i in range(3):
        graph.node.add(name=f"dense_{i}/MatMul", op="MatMul", input=["x", "w"], device="/device:GPU:0")
    event = event_pb2.Event(
        wall_time=1.5, step=3, summary=summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag="loss", simple_value=0.5)])
    )
    # field 1 of ConfigProto is a map of messages: it parses as nameless, empty "planes"
    config = config_pb2.ConfigProto(device_count={"GPU": 1, "CPU": 2}, log_device_placement=True)
    for i, msg in enumerate((fd, graph, event, config)):
        err = _read_error(_write(tmp_path, msg.SerializeToString(), f"foreign{i}.xplane.pb"))
        assert "XSpace" in err.reason, err


def test_size_limit_refuses_before_reading(tmp_path, real_bytes, monkeypatch):
    path = _write(tmp_path, real_bytes)
    # the file must not even be read: make reading fail loudly if it is attempted
    import tb_gpu_advisor.common.fsio as fsio

    monkeypatch.setattr(fsio, "read_bytes", lambda p: pytest.fail("read an oversized file"))
    err = _read_error(path, max_bytes=len(real_bytes) - 1)
    assert "limit" in err.reason and "TB_GPU_ADVISOR_MAX_PROFILE_BYTES" in err.reason
    assert "67.7 KiB" in err.reason and "67.7 KiB limit" in err.reason  # readable sizes, not "0.0 GiB"
    monkeypatch.undo()
    assert read_timeline(path, max_bytes=len(real_bytes)).num_events == 2256  # at the limit is fine


def test_directory(tmp_path):
    d = tmp_path / "looks_like.xplane.pb"
    d.mkdir()
    err = _read_error(str(d))
    assert "directory" in err.reason


def test_missing_path(tmp_path):
    err = _read_error(str(tmp_path / "nope" / "host.xplane.pb"))
    assert "cannot open" in err.reason


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file(tmp_path, real_bytes):
    path = _write(tmp_path, real_bytes)
    os.chmod(path, 0)
    try:
        _read_error(path)
    finally:
        os.chmod(path, 0o644)


def test_seeded_single_byte_corruptions_parse_or_raise_profile_read_error(real_bytes):
    """200 random one-byte changes of a real capture: each either parses or raises ProfileReadError.

    Both outcomes must occur (a corruption inside a string or a number is
    still a valid profile; one in a length or tag is not), which shows the
    test reaches both paths rather than failing early every time.
    """
    rng = random.Random(20261121)
    outcomes = {"parsed": 0, "rejected": 0}
    t0 = time.perf_counter()
    for _ in range(200):
        data = bytearray(real_bytes)
        pos = rng.randrange(len(data))
        data[pos] = (data[pos] + rng.randrange(1, 256)) % 256  # always a real change
        try:
            parse_timeline(bytes(data), path=f"corrupt@{pos}")
            outcomes["parsed"] += 1
        except ProfileReadError as e:
            assert str(e).startswith(f"corrupt@{pos}: ")
            outcomes["rejected"] += 1
    assert outcomes["parsed"] > 0 and outcomes["rejected"] > 0, outcomes
    assert time.perf_counter() - t0 < 10


def test_absolute_epoch_line_timestamps_do_not_overflow(tmp_path):
    """A file with epoch-ns line timestamps is re-based instead of wrapping int64 picoseconds."""
    from tests.support.tiny_capture import epoch_space

    epoch_ns = 1_795_000_000_000_000_000
    path = tmp_path / "h.xplane.pb"
    path.write_bytes(epoch_space(epoch_ns, offset_ps=7, duration_ps=3))
    tl = read_timeline(str(path))
    starts = [int(ln.start_ps[0]) for ln in tl.plane("/device:GPU:0").lines]
    assert tl.time_base_ns == epoch_ns
    assert starts == [7, 5_000_000 + 7]


def test_a_parser_out_of_memory_is_a_memory_error_not_a_damaged_file(real_bytes, monkeypatch):
    """protobuf's parser says "Arena alloc failed" when the worker's memory limit is reached: the report must say
    out of memory (raise the limit), not "truncated or foreign file" (re-capture)."""
    from google.protobuf.message import DecodeError

    from tb_gpu_advisor.formats.xplane import reader

    def no_memory(*args, **kwargs):
        raise DecodeError("Error parsing message with type 'tb_gpu_advisor.xspace.LazyPlane': Arena alloc failed")

    monkeypatch.setattr(reader, "_read_plane", no_memory)
    with pytest.raises(MemoryError, match="out of memory while parsing"):
        parse_timeline(real_bytes)
