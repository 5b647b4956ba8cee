"""rocprofv3's CSV files (``--output-format csv``; issue #37) in a logdir: told by their headers, never their names, and
the files of one run -- one folder, one prefix -- listed as one capture (main: no format claimed a CSV, so a folder of
them was "no profiles").  Built with ``synthetic/rocprofv3trace.py`` (the writer's headers)."""

from __future__ import annotations

from pathlib import Path

from synthetic import rocprofv3trace
from tb_gpu_advisor.discover.logdir import discover, skipped

STEPS = [[("gemm_kernel(float*)", 900.0), ("relu(float*)", 80.0)]] * 6


def test_two_runs_in_one_folder_are_two_captures_of_their_own_files(tmp_path: Path):
    run = tmp_path / "logdir" / "job"
    rocprofv3trace.write(str(run), STEPS, prefix="4242")
    rocprofv3trace.write(str(run), STEPS[:2], prefix="5151", layout="old")
    (run / "7_kernel_trace.csv").write_text('"Name","Calls","TotalDurationNs"\n"k",1,2\n')  # so named, not one
    sessions = discover(str(tmp_path / "logdir"))
    hosts = sorted((h for s in sessions for h in s.hosts), key=lambda h: h.host)
    assert [(h.host, h.format) for h in hosts] == [("4242", "rocprofv3-csv"), ("5151", "rocprofv3-csv")]
    assert {Path(f.path).name for f in hosts[0].ranks} == {f"4242_{k}.csv" for k in (
        "kernel_trace", "hip_api_trace", "memory_copy_trace", "marker_api_trace", "agent_info")}
    assert all(Path(f.path).name.startswith("5151_") for f in hosts[1].ranks)
    assert Path(hosts[0].path).name == "4242_kernel_trace.csv"  # the capture's own file first
    assert any(p.endswith("7_kernel_trace.csv") and "no rocprofv3 trace" in why
               for p, why in skipped(str(tmp_path / "logdir")))


def test_agent_info_alone_and_other_csvs_are_no_capture_and_no_note(tmp_path: Path):
    """Control: what rocprofv3 writes with no trace (agent info only), its stats and a CSV of another program list
    nothing and say nothing (main neither)."""
    rocprofv3trace.write(str(tmp_path / "full"), STEPS)
    lone = tmp_path / "logdir" / "job"
    lone.mkdir(parents=True)
    (lone / "9_agent_info.csv").write_bytes((tmp_path / "full" / "4242_agent_info.csv").read_bytes())
    (lone / "metrics.csv").write_text("step,loss\n1,0.5\n")
    (lone / "4242_kernel_stats.csv").write_text('"Name","Calls","TotalDurationNs"\n"k",1,2\n')
    assert discover(str(tmp_path / "logdir")) == []
    assert skipped(str(tmp_path / "logdir")) == []  # a training loop's CSV and rocprofv3's stats are never opened
