"""``benchmarks/issue30.py``'s one table (issue #38 deliverable 7): rows of different parts merged by key, ratios,
and each target's verdict, on hand-made rows.  No timing is measured here: numbers are not tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def issue30(bench_import):
    return bench_import("issue30")


def m(cpu: float, wall: float, peak_mb: float, **more) -> dict:
    return {"status": "ok", "cpu_s": cpu, "wall_s": wall, "peak_mb": peak_mb, **more}


def test_rows_of_one_key_merge_and_sort_by_format_then_size(issue30) -> None:
    """kineto_floor's PyTorch row and hta_compare's peer for it become one row; XPlane before PyTorch before
    Nsight, small before big."""
    kineto = [{"format": "pytorch", "shape": "h100", "size": "1GB", "bytes": 10**9, "ours": m(5, 6, 800)},
              {"format": "pytorch", "shape": "h100", "size": "100MB", "bytes": 10**8, "ours": m(1, 1, 120),
               "floor": m(0.5, 0.5, 300, what="msgspec raw-args decode")}]
    hta = [{"format": "pytorch", "shape": "h100", "size": "100MB", "bytes": 10**8,
            "peer": m(100, 200, 900, name="HTA"), "peer_ours": m(2, 2.5, 130)}]
    nsight = [{"format": "nsight", "shape": "nsys_large", "size": "100MB", "bytes": 10**8, "ours": m(9, 9, 300)}]
    xplane = [{"format": "xplane", "shape": "tf", "size": "100MB", "bytes": 10**8, "ours": m(1, 1, 140)}]
    rows = issue30.merge([kineto, xplane, nsight, hta])
    assert [(r["format"], r["size"]) for r in rows] == [("xplane", "100MB"), ("pytorch", "100MB"),
                                                        ("pytorch", "1GB"), ("nsight", "100MB")]
    torch100 = rows[1]
    assert torch100["ours"]["cpu_s"] == 1 and torch100["peer"]["name"] == "HTA"
    rs = issue30.ratios(torch100)
    # ours / peer compares ours as the peer's script ran it (whole processes), not kineto_floor's warm figure
    assert rs["cpu_x_floor"] == pytest.approx(2.0) and rs["cpu_x_peer"] == pytest.approx(0.02)
    assert rs["rss_x_file"] == pytest.approx(1.2)


def test_verdicts_follow_the_issue_targets_by_format_and_size(issue30) -> None:
    small = {"format": "xplane", "shape": "dense", "size": "100MB", "bytes": 10**8,
             "ours": m(1.4, 2, 160), "floor": m(1.0, 1, 100), "peer": m(40, 40, 4000, name="stock")}
    got = {v["target"]: v["met"] for v in issue30.verdicts(small)}
    assert got == {"CPU <= 1.5x upb": True, "RSS <= 1.5x file": False, "<= 0.04x stock (CPU)": True}
    big = {**small, "size": "1GB", "bytes": 10**9, "ours": m(12, 11, 1000), "peer": None}
    got = {v["target"]: v["met"] for v in issue30.verdicts(big)}
    assert got == {"CPU <= 1x upb": False, "RSS <= 1.5x file": True, "wall < 10 s": False}
    nsight = {"format": "nsight", "shape": "nsys_large", "size": "1GB", "bytes": 10**9, "ours": m(60, 29.9, 1400),
              "floor": m(20, 20, 60)}
    assert [(v["target"], v["met"]) for v in issue30.verdicts(nsight)] == [("wall < 30 s", True),
                                                                           ("RSS <= 1.5x file", True)]
    assert issue30.verdicts({**nsight, "size": "100MB", "bytes": 10**8}) == []


def test_the_table_says_why_a_cell_has_no_number(issue30) -> None:
    """A failed or absent measurement is named in its cell, a target without its measure is "not measured", and
    a reader without a compiled path says "same reader"."""
    rows = [{"format": "nsight", "shape": "nsys_large", "size": "1GB", "bytes": 10**9, "counted": "whole process",
             "ours": {"status": "timeout"}, "pure": {"status": "same reader"},
             "floor": m(20, 20, 60, what="sqlite3 fetch"), "peer": {"status": "error", "note": "exit 1", "name": "nsys-ai"}},
            {"format": "pytorch", "shape": "tiny", "size": "100MB", "bytes": 10**8, "ours": m(1, 1, 100),
             "floor": m(1, 1, 300, what="msgspec raw-args decode")}]
    text = issue30.render_table(rows)
    lines = text.splitlines()
    assert lines[0] == issue30.HEADER and len(lines) == 4
    assert all(line.count("|") == lines[0].count("|") for line in lines), text
    nsight = next(line for line in lines if "| nsight |" in line)
    assert "| timeout |" in nsight and "| same reader |" in nsight and "error: exit 1" in nsight
    # one column per kind of target: wall and RSS judged (not measured here), none for CPU vs floor or the peer
    assert nsight.endswith("| – | not measured (RSS <= 1.5x file) | not measured (wall < 30 s) | – |"), nsight
    torch = next(line for line in lines if "| pytorch |" in line)
    assert "| not run |" in torch and "| met: 1.00x (CPU <= 2x msgspec) |" in torch and "not met" not in torch


def test_a_saved_run_renders_again(issue30, tmp_path) -> None:
    """``--render SAVED_JSON``: the header and the one table of a saved run, from its JSON alone."""
    import json

    row = {"format": "pytorch", "shape": "tiny", "size": "1GB", "bytes": 10**9, "counted": "after a warm-up report",
           "ours": m(4, 3, 700), "floor": m(3, 3, 3000, what="msgspec raw-args decode")}
    saved = tmp_path / "issue30-x.json"
    saved.write_text(json.dumps({"stamp": "2026-11-28 23:00:00 UTC", "wall_s": 600.0,
                                 "machine": {"code": "git abc1234", "decoders": "PyTorch JSON decoder: compiled (C)"},
                                 "load_start": "1.00 / 1.00 / 1.00", "load_end": "2.00 / 2.00 / 2.00",
                                 "rows": [{**row, "verdicts": issue30.verdicts(row)}]}))
    text = issue30.render_saved(str(saved))
    assert "(2026-11-28 23:00:00 UTC)" in text and "- code: git abc1234" in text and "took 10.0 min" in text
    line = next(ln for ln in text.splitlines() if ln.startswith("| pytorch | tiny | 1GB |"))
    assert "**not met**: 1.33x (CPU <= 1x msgspec)" in line and "met: 0.70x (RSS <= 1.5x file)" in line
    assert "met: 3.0 s (wall < 10 s)" in line
