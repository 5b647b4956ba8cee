"""The benchmark script runs end to end on a tiny capture (no timing asserts: numbers are not tests).

Why: ``benchmarks/run.py`` is only run by hand, so an API change in the
generator, reader or analyzer would otherwise break it silently.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.support.paths import REPO

REPO = str(REPO)
SCRIPT = os.path.join(REPO, "benchmarks", "run.py")


def test_help() -> None:
    out = subprocess.run([sys.executable, SCRIPT, "--help"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0
    assert "--sizes" in out.stdout and "--quick" in out.stdout


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="peak RSS is read from Linux rusage and /proc")
def test_tiny_run(tmp_path) -> None:
    out = subprocess.run(
        [sys.executable, SCRIPT, "--sizes", "200KB", "--skip-http", "--cache-dir", str(tmp_path), "--timeout", "120"],
        capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    table = out.stdout
    for row in ("protobuf full parse (floor)", "ours: read", "ours: read + analyze_host", "stock: overview_page"):
        assert f"| {row} | ok" in table, table[-3000:]
    assert "peak RSS <= 3x file size" in table
    assert list(tmp_path.glob("results-*.md")) and list(tmp_path.glob("corpus/*.xplane.pb"))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="peak RSS is read from Linux rusage and /proc")
def test_dense_shape_and_stages(tmp_path) -> None:
    """``--shapes tf,dense --stages``: both capture shapes are generated and analysed, each with its memory-by-stage
    table (issue 12 item 8).  No number is checked: only that every stage ran and was reported."""
    out = subprocess.run(
        [sys.executable, SCRIPT, "--sizes", "200KB", "--shapes", "tf,dense", "--stages", "--skip-http", "--skip-stock",
         "--cache-dir", str(tmp_path), "--timeout", "120"],
        capture_output=True, text=True, timeout=240,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    table = out.stdout
    assert "### 200KB:" in table and "### 200KB-dense:" in table, table[-3000:]
    assert table.count("Memory by stage (peaks above the RSS after imports") == 2, table[-3000:]
    for stage in ("read + decode (timeline columns)", "metrics context", "steps", "rules", "report (tables)", "**whole analysis**"):
        assert table.count(stage) >= 2, stage
    assert len(list(tmp_path.glob("corpus/bench_200KB-dense_*.xplane.pb"))) == 1


TORCH_TRACE_DIR = os.path.join(REPO, "..", "shared", "profiles", "real-h100-torch", "torch_healthy_bf16")


@pytest.mark.skipif(not os.path.isdir(TORCH_TRACE_DIR), reason="real PyTorch traces not present")
def test_kineto_parse_benchmark_runs(tmp_path) -> None:
    """benchmarks/kineto_parse.py on a 2 MB trace with the stdlib reader: every X event of the repeated trace
    becomes a column row."""
    import glob

    out = subprocess.run([sys.executable, os.path.join(REPO, "benchmarks", "kineto_parse.py"), "--sizes", "2",
                          "--methods", "stdlib"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    row = next(line for line in out.stdout.splitlines() if line.startswith("| stdlib |"))
    events = int(row.split("|")[3].replace(",", ""))
    src = glob.glob(os.path.join(TORCH_TRACE_DIR, "*.pt.trace.json"))[0]
    with open(src, encoding="utf-8") as f:
        per_copy = sum(1 for e in json.load(f)["traceEvents"] if e.get("ph") == "X")
    assert events > 0 and events % per_copy == 0, (events, per_copy)


@pytest.mark.skipif(not os.path.isdir(TORCH_TRACE_DIR), reason="real PyTorch traces not present")
def test_hta_compare_benchmark_runs() -> None:
    """benchmarks/hta_compare.py on a 2 MB trace: both contenders produce a row (HTA where installed), and ours
    is the full analysis (its child exits 0, the same exit the CLI gives a healthy run)."""
    import importlib.util

    out = subprocess.run([sys.executable, os.path.join(REPO, "benchmarks", "hta_compare.py"), "--sizes", "2"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    rows = [line for line in out.stdout.splitlines() if line.startswith("| 2 |")]
    ours = next(r for r in rows if "Advisor" in r)
    assert float(ours.split("|")[4]) > 0 and "x |" in ours, ours
    if importlib.util.find_spec("hta") is not None:
        hta = next(r for r in rows if "HTA" in r)
        assert "exit" not in hta and "timed out" not in hta, hta


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="peak RSS is read from Linux rusage and /proc")
def test_memory_benchmark_runs(tmp_path) -> None:
    """``benchmarks/memory.py`` (issue #21 item 8) on small files: every row measured and judged; no number is
    checked here (numbers are not tests)."""
    out = subprocess.run(
        [sys.executable, os.path.join(REPO, "benchmarks", "memory.py"), "--empty-mb", "1", "--dense-size", "200KB",
         "--skip-stock", "--cache-dir", str(tmp_path), "--timeout", "120"],
        capture_output=True, text=True, timeout=240,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    table = out.stdout
    for row in ("| empty events, XPlane, 1 MB |", "| empty events, PyTorch, 1 MB |", "| dense 8-GPU capture (200KB) |"):
        assert row in table, table[-3000:]
    assert table.count("**pass**") + table.count("**fail**") == 3 and list(tmp_path.glob("memory-*.md"))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="peak RSS is read from Linux rusage and /proc")
def test_nsys_large_runs_on_a_small_export(tmp_path) -> None:
    """``benchmarks/nsys_large.py`` end to end on a 2 MB export: it writes the export, reads and reports it."""
    script = os.path.join(REPO, "benchmarks", "nsys_large.py")
    out = subprocess.run([sys.executable, script, "--size", "2MB", "--cache-dir", str(tmp_path), "--timeout", "120"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "| read (read_trace) | ok |" in out.stdout and "| report (tb-gpu-advisor report FILE --format json) | ok |" in out.stdout
    assert list(tmp_path.glob("nsys-*.md")) and list(tmp_path.glob("nsys/2MB/run/report.sqlite"))


@pytest.mark.skipif(not os.path.isdir(TORCH_TRACE_DIR), reason="real PyTorch traces not present")
def test_issue30_generates_every_input_once_and_kineto_floor_rows(tmp_path) -> None:
    """``issue30.py --generate-only`` writes each format's inputs into the cache the parts read (XPlane shapes,
    PyTorch shapes, the Nsight export); ``kineto_floor.py`` then measures from that cache and writes its rows for
    the one table: floor, ours and pure per shape."""
    cmd = [sys.executable, os.path.join(REPO, "benchmarks", "issue30.py"), "--generate-only", "--sizes-mb", "1",
           "--cache-dir", str(tmp_path)]
    gen = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=REPO)
    assert gen.returncode == 0, gen.stderr[-2000:]
    assert len(list(tmp_path.glob("corpus/bench_1MB*.xplane.pb"))) == 3
    assert len(list(tmp_path.glob("kineto/*_1MB/run/host.pt.trace.json"))) == 2
    assert list(tmp_path.glob("nsys/1MB/run/report.sqlite"))
    rows_json = tmp_path / "rows.json"
    out = subprocess.run([sys.executable, os.path.join(REPO, "benchmarks", "kineto_floor.py"), "--sizes", "1",
                          "--methods", "floor,ours,pure", "--cache-dir", str(tmp_path / "kineto"), "--json",
                          str(rows_json)], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert out.returncode == 0, out.stderr[-2000:]
    rows = json.loads(rows_json.read_text())
    assert sorted((r["format"], r["shape"], r["size"]) for r in rows) == [("pytorch", "h100", "1MB"),
                                                                          ("pytorch", "tiny", "1MB")]
    for r in rows:
        assert {r[p]["status"] for p in ("floor", "ours", "pure")} == {"ok"}, r
        assert r["floor"]["what"] == "msgspec raw-args decode" and r["counted"] == "after a warm-up report"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="peak RSS is read from Linux rusage and /proc")
def test_nsys_floor_rows_on_a_small_export(tmp_path) -> None:
    """``benchmarks/nsys_floor.py`` on a 2 MB export: the floor fetches rows, ours reports, the pure path says
    whether it is another reader, nsys-ai runs where installed; the row is written as JSON for issue30.py."""
    import importlib.util

    rows_json = tmp_path / "rows.json"
    out = subprocess.run([sys.executable, os.path.join(REPO, "benchmarks", "nsys_floor.py"), "--sizes", "2MB",
                          "--cache-dir", str(tmp_path), "--timeout", "120", "--json", str(rows_json)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "| 2MB |" in out.stdout, out.stdout
    (row,) = json.loads(rows_json.read_text())
    assert (row["format"], row["size"], row["ours"]["status"], row["floor"]["status"]) == ("nsight", "2MB", "ok", "ok")
    assert row["floor"]["rows"] > 0 and row["pure"]["status"] in ("ok", "same reader")
    if importlib.util.find_spec("nsys_ai") is not None:
        assert row["peer"]["status"] == "ok" and row["peer"]["findings"] > 0, row["peer"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="peak RSS is read from Linux rusage and /proc")
def test_xplane_floor_on_three_densities(tmp_path) -> None:
    """``benchmarks/xplane_floor.py`` (issue #30 items 2 and 4): every corpus shape is generated, run through
    ``report`` and the bare parse, before (``--baseline``: here this same checkout) and after in one run, and a
    saved run compares with itself.  No number is checked."""
    script = os.path.join(REPO, "benchmarks", "xplane_floor.py")
    out = subprocess.run(
        [sys.executable, script, "--sizes", "200KB", "--shapes", "dense,tf,stats", "--no-real", "--skip-stock",
         "--cache-dir", str(tmp_path), "--timeout", "120", "--baseline", str(REPO), "--json", str(tmp_path / "rows")],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    for shape in ("dense", "tf", "stats"):
        row = next((ln for ln in out.stdout.splitlines() if ln.startswith(f"| 200KB {shape} |")), None)
        assert row is not None, out.stdout[-3000:]
        cells = [c.strip() for c in row.strip("|").split("|")]
        # ours / floor, RSS / file, RSS above the start-up's / file: all measured
        assert cells[7].endswith("x") and cells[8].endswith("x") and cells[9].endswith("x"), row
    assert "Start-up: `report` of a " in out.stdout
    before_after = out.stdout.split("runs alternating.", 1)[-1]
    assert before_after.count("| 200KB ") == 3 and "after / before (CPU)" in before_after, out.stdout[-3000:]
    rows = json.loads((tmp_path / "rows").read_text())  # issue30.py's rows: one per generated capture
    assert sorted((r["format"], r["shape"], r["size"]) for r in rows) == [("xplane", s, "200KB") for s in
                                                                          ("dense", "stats", "tf")]
    assert all(r["ours"]["status"] == "ok" and r["floor"]["what"] == "upb parse" for r in rows), rows
    saved = list(tmp_path.glob("xplane-floor-*.json"))
    assert len(saved) == 1
    cmp = subprocess.run([sys.executable, script, "--compare", str(saved[0]), str(saved[0])],
                         capture_output=True, text=True, timeout=60, check=False)
    assert cmp.returncode == 0 and cmp.stdout.count("| 200KB ") == 3, cmp.stdout + cmp.stderr


def test_issue30_runs_its_parts_in_one_report(tmp_path) -> None:
    """``benchmarks/issue30.py`` runs the parts it is asked for back to back and prints each one's table under its
    heading, after the machine's load at start and end (the JSON writer's and the CLI start-up's here: seconds),
    and saves the report with its JSON twin; an unknown part is refused."""
    script = os.path.join(REPO, "benchmarks", "issue30.py")
    out = subprocess.run([sys.executable, script, "--skip", "kineto,xplane,nsight,kineto_hta", "--table-repeat", "1",
                          "--out-dir", str(tmp_path)], capture_output=True, text=True, timeout=600, cwd=REPO)
    assert out.returncode == 0, out.stderr[-2000:]
    text = out.stdout
    assert text.index("Start:") < text.index("End:") < text.index("## json") < text.index("## startup")
    assert "decoders: XPlane decoder:" in text and "Nsight Systems reader:" in text
    assert len(list(tmp_path.glob("issue30-*.md"))) == 1 and len(list(tmp_path.glob("issue30-*.json"))) == 1
    assert "texts equal to the asdict reference: True" in text and "| cli --help" in text
    assert "1 runs each, interleaved" in text  # --table-repeat reached the startup part
    bad = subprocess.run([sys.executable, script, "--skip", "nothing_such"], capture_output=True, text=True,
                         timeout=60, cwd=REPO)
    assert bad.returncode == 2 and "unknown parts" in bad.stderr
