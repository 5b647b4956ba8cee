"""An independent oracle for reader tests: a plain, slow, full protobuf parse.

The reader decodes events column-wise with its own wire decoder; this module
walks the same file with protobuf's regular message classes, one Python
object per event, and tests compare the two field by field.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.formats.xplane.schema import message_class
from tb_gpu_advisor.formats.xplane.timeline import Timeline


@dataclass
class RefLine:
    name: str
    names: list[str]
    start_ps: list[int]
    duration_ps: list[int]
    stats: list[dict[str, object]]


def _stat_value(st, stat_names: dict[int, str]) -> object:
    if st.ref_value:
        return stat_names.get(st.ref_value, "")
    if st.str_value:
        return st.str_value
    if st.bytes_value:
        return st.bytes_value.decode("utf-8", "replace")
    if st.double_value:
        return st.double_value
    if st.uint64_value:
        return int(np.uint64(st.uint64_value).astype(np.int64))
    return st.int64_value


def reference_planes(path: str) -> dict[str, list[RefLine]]:
    """plane name -> lines, parsed with full protobuf messages."""
    space = message_class("XSpace").FromString(open(path, "rb").read())
    out: dict[str, list[RefLine]] = {}
    for plane in space.planes:
        stat_names = {e.key: e.value.name for e in plane.stat_metadata}
        event_names = {e.key: e.value.name for e in plane.event_metadata}
        lines = []
        for line in plane.lines:
            lines.append(
                RefLine(
                    name=line.name,
                    names=[event_names.get(ev.metadata_id, "<unknown event metadata>") for ev in line.events],
                    start_ps=[line.timestamp_ns * 1000 + ev.offset_ps for ev in line.events],
                    duration_ps=[ev.duration_ps for ev in line.events],
                    stats=[
                        {stat_names[s.metadata_id]: _stat_value(s, stat_names) for s in ev.stats if s.metadata_id in stat_names}
                        for ev in line.events
                    ],
                )
            )
        out[plane.name] = lines
    return out


def _nan_token(v: object) -> object:
    """NaN as a marker equal to itself, so lists holding NaN compare equal when both hold NaN there."""
    return "NaN" if isinstance(v, float) and v != v else v


def assert_matches_reference(tl: Timeline, path: str) -> int:
    """Assert every plane, line, event and event stat of ``tl`` equals the full parse.

    Returns the number of events compared, so callers can assert it is not zero.
    """
    ref = reference_planes(path)
    assert [p.name for p in tl.planes] == list(ref)
    compared = 0
    for plane in tl.planes:
        ref_lines = ref[plane.name]
        assert [ln.name for ln in plane.lines] == [r.name for r in ref_lines]
        for line, rl in zip(plane.lines, ref_lines):
            assert list(line.names()) == rl.names, line.name
            assert line.start_ps.tolist() == rl.start_ps, line.name
            assert line.duration_ps.tolist() == rl.duration_ps, line.name
            stat_keys = {k for st in rl.stats for k in st}
            for key in stat_keys:
                expected = [st.get(key) for st in rl.stats]
                present = line.has_stat(key)
                assert present.tolist() == [v is not None for v in expected], (line.name, key)
                kinds = {type(v) for v in expected if v is not None}
                if kinds == {str}:
                    got = [plane.string(int(i)) if ok else None for i, ok in zip(line.str_stat(key, inherit=False), present)]
                elif kinds <= {float, int} and float in kinds:
                    # doubles, some of them 0.0 (proto3 cannot tell a 0.0 double from an absent one: the parse
                    # above reads those as int 0), or NaN (TF writes NaN fragmentation): compared as numbers
                    got = [float(v) if ok else None for v, ok in zip(line.float_stat(key), present)]
                    expected = [None if v is None else float(v) for v in expected]
                    got, expected = ([_nan_token(v) for v in xs] for xs in (got, expected))
                else:
                    assert kinds <= {int}, (plane.name, line.name, key, kinds)  # a mix the oracle cannot compare
                    got = [int(v) if ok else None for v, ok in zip(line.int_stat(key, inherit=False), present)]
                assert got == expected, (plane.name, line.name, key)
            compared += len(line)
    return compared
