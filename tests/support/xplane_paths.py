"""Both XPlane decoders on one file, and a column-by-column comparison of what they read (issue #38 item 5)."""

from __future__ import annotations

import dataclasses
import io
import os

import numpy as np
import pytest

from tb_gpu_advisor.formats.xplane import reader
from tb_gpu_advisor.formats.xplane.timeline import StatTable, Timeline
from tests.support.compiled import REQUIRE_ENV, built


def read_both(source: str | bytes, keep_stats: frozenset[str] | None = None) -> tuple[object, object]:
    """(compiled result, pure-Python result) of reading ``source`` (a path, or a file's bytes) with
    ``keep_stats``: a Timeline, or the error raised."""
    return read_with(True, source, keep_stats), read_with(False, source, keep_stats)


def read_with(use_compiled: bool, source: str | bytes, keep_stats: frozenset[str] | None = None) -> object:
    """Read ``source`` with the compiled decoder or the pure-Python one; the Timeline or the error.

    The compiled module is put in place too, so the compiled path runs even where ``TB_GPU_ADVISOR_PURE_PYTHON``
    turned it off for the process (``make test`` runs the equality tests that way as well)."""
    saved = reader._line_events, reader._plane_fields, reader._release_scratch, reader._CWIRE
    if use_compiled:
        _cwire = built("tb_gpu_advisor.formats.xplane._cwire")
        if _cwire is None and not os.environ.get(REQUIRE_ENV):  # no C compiler at install: nothing compiled to read
            pytest.skip("the compiled XPlane decoder is not built (pip install -e . with a C compiler builds it)")
        assert _cwire is not None, "the C extension was not built: is a C compiler installed?"
        reader._CWIRE, reader._release_scratch = _cwire, _cwire.release_scratch
        reader._line_events, reader._plane_fields = reader._line_events_compiled, reader._plane_fields_compiled
    else:
        reader._line_events, reader._plane_fields = reader._line_events_python, reader._plane_fields_python
    try:
        if isinstance(source, bytes):
            return reader._parse(io.BytesIO(source), len(source), "<bytes>", keep_stats)
        return reader.read_timeline(source, keep_stats=keep_stats)
    except Exception as e:  # noqa: BLE001 - the error is the result compared
        return e
    finally:
        reader._line_events, reader._plane_fields, reader._release_scratch, reader._CWIRE = saved


def differences(a: object, b: object) -> list[str]:
    """What differs between two results of ``read_both``: every column's values and dtype, every name."""
    if isinstance(a, Exception) or isinstance(b, Exception):
        same = type(a) is type(b) and str(a) == str(b)
        return [] if same else [f"results differ: {a!r} vs {b!r}"]
    assert isinstance(a, Timeline) and isinstance(b, Timeline)
    out = _diff_fields("timeline", a, b, skip={"planes"})
    if len(a.planes) != len(b.planes):
        return out + [f"{len(a.planes)} vs {len(b.planes)} planes"]
    for i, (pa, pb) in enumerate(zip(a.planes, b.planes)):
        out += _diff_fields(f"plane {i}", pa, pb, skip={"lines", "_stat_keys"})
        if len(pa.lines) != len(pb.lines):
            out.append(f"plane {i}: {len(pa.lines)} vs {len(pb.lines)} lines")
            continue
        for j, (la, lb) in enumerate(zip(pa.lines, pb.lines)):
            out += _diff_fields(f"plane {i} line {j}", la, lb, skip={"plane", "_released"})
    return out


def _diff_fields(where: str, a, b, skip: set[str]) -> list[str]:
    out = []
    for f in dataclasses.fields(a):
        if f.name in skip:
            continue
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, StatTable):
            out += _diff_fields(f"{where} {f.name}", x, y, skip=set())
        elif isinstance(x, np.ndarray):
            if x.dtype != y.dtype or x.shape != y.shape or not np.array_equal(x, y):
                out.append(f"{where}: column {f.name} differs ({x.dtype}{x.shape} vs {y.dtype}{y.shape})")
        elif isinstance(x, dict) and any(isinstance(v, np.ndarray) for v in (*x.values(), *y.values())):
            if list(x) != list(y):
                out.append(f"{where}: {f.name} keys differ ({list(x)} vs {list(y)})")
            for k in x:
                if k in y and (x[k].dtype != y[k].dtype or not np.array_equal(x[k], y[k])):
                    out.append(f"{where}: {f.name}[{k}] differs ({x[k].dtype}{x[k].shape} vs {y[k].dtype}{y[k].shape})")
        elif x != y:
            out.append(f"{where}: {f.name} differs")
    return out


def written_capture(tmp_path, cap, name: str):  # noqa: ANN001, ANN201 - a Path, a synthetic.jaxcapture.JaxCapture
    """Write a synthetic JAX capture ``cap`` as ``tmp_path/name/name.xplane.pb`` (a run of its own) and return that
    path: the one layout the JAX generator tests read their file from."""
    p = tmp_path / name / f"{name}.xplane.pb"
    p.parent.mkdir(parents=True)
    cap.finish().write(p)
    return p
