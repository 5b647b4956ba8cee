"""``_cscan.count_byte``, the reader's chunk sizing ("}" per 4 MB window) in one pass of C: the count numpy gives for
every window, clipped to the buffer as a slice is, on bytes, bytearrays and memoryviews; and ``parse._count_closing``
gives it whichever way it counts."""

from __future__ import annotations

import numpy as np
import pytest

from tb_gpu_advisor.formats.kineto import parse
from tests.support.compiled import built, needs

CSCAN = built("tb_gpu_advisor.formats.kineto._cscan")


def _numpy_count(buf: bytes, start: int, length: int, byte: int) -> int:
    window = np.frombuffer(buf, np.uint8)[max(start, 0):][:max(length, 0)]
    return int(np.count_nonzero(window == byte))


@needs(CSCAN, "Kineto scanner")
def test_count_byte_is_numpys_count_on_every_window() -> None:
    rng = np.random.default_rng(3)
    for size in (0, 1, 127, 128, 129, 255, 256, 1000, 70_000):
        data = rng.choice(np.frombuffer(b'}{",: ab', np.uint8), size).tobytes()  # "}" about one byte in eight
        if size == 70_000:
            data = b"}" * 300 + data  # a run past a block's 128 bytes: each block's byte counter stays exact
        for buf in (data, bytearray(data), memoryview(data)):
            for start, length in ((0, len(data)), (1, len(data)), (3, 200), (len(data) - 5, 100), (-4, 10),
                                  (len(data) + 9, 5), (7, -1), (0, 1 << 40)):
                for byte in (0x7D, 0x20, 0x00):
                    assert CSCAN.count_byte(buf, start, length, byte) == _numpy_count(data, start, length, byte)


@needs(CSCAN, "Kineto scanner")
def test_count_byte_refuses_a_byte_out_of_range_and_no_buffer() -> None:
    with pytest.raises(ValueError):
        CSCAN.count_byte(b"}}", 0, 2, 256)
    with pytest.raises(ValueError):
        CSCAN.count_byte(b"}}", 0, 2, -1)
    with pytest.raises(TypeError):
        CSCAN.count_byte("}}", 0, 2, 0x7D)


@pytest.mark.parametrize("compiled", [True, False], ids=["C", "numpy"])
def test_count_closing_either_way(monkeypatch: pytest.MonkeyPatch, compiled: bool) -> None:
    if compiled and CSCAN is None:
        pytest.skip("the compiled scanner is not built")
    monkeypatch.setattr(parse, "_CSCAN", CSCAN if compiled else None)
    data = bytearray(b'{"a": {"b": 1}}, {"c": 2}' * 50)
    assert parse._count_closing(data, 0, len(data)) == 150
    assert parse._count_closing(data, 16, 10) == _numpy_count(bytes(data), 16, 10, 0x7D)
