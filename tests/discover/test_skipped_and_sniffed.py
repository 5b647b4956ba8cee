"""Nothing is left out silently (issue #21 item 5): traces saved under another name are found by their content, and
what the walk leaves out -- symlinks leaving the logdir, JSON that is no trace -- is named with why.

The traces are real (``tests/fixtures``); the symlinks point at real folders outside the logdir.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

from tb_gpu_advisor.cli.main import main as cli
from tb_gpu_advisor.discover.logdir import discover, skipped
from tests.support.paths import FIXTURES

#: A real PyTorch trace (the HTA V100 rank), and a real ROCm one, as the handler named them.
RANK = FIXTURES / "wild" / "hta_v100" / "rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"


def _logdir(tmp_path: Path) -> Path:
    logdir = tmp_path / "logdir"
    (logdir / "exported").mkdir(parents=True)
    # prof.export_chrome_trace("trace.json"): the same JSON under a name the handler never writes
    (logdir / "exported" / "trace.json").write_bytes(gzip.decompress(RANK.read_bytes()))
    (logdir / "exported" / "config.json").write_text('{"lr": 0.1}')
    (logdir / "exported" / "perfetto.json").write_text('{"traceEvents": [{"ph": "X", "name": "frame", "ts": 1}]}')
    outside = tmp_path / "elsewhere"
    (outside / "run").mkdir(parents=True)
    shutil.copy(RANK, outside / "run" / RANK.name)
    (logdir / "linked").symlink_to(outside / "run", target_is_directory=True)
    return logdir


def test_a_trace_under_another_name_is_found_by_its_content(tmp_path):
    logdir = _logdir(tmp_path)
    (s,) = discover(str(logdir))
    assert (s.run, [h.host for h in s.hosts]) == ("exported", ["trace"])


def test_what_is_left_out_is_named_with_why(tmp_path):
    logdir = _logdir(tmp_path)
    skips = dict(skipped(str(logdir)))
    assert set(skips) == {"exported/config.json", "exported/perfetto.json", "linked"}
    assert "outside the logdir" in skips["linked"]
    assert "without traceEvents" in skips["exported/config.json"]
    assert "not PyTorch's" in skips["exported/perfetto.json"]


def test_the_cli_says_what_it_left_out(tmp_path, capsys):
    logdir = _logdir(tmp_path)
    assert cli(["report", str(logdir), "--list"]) == 0
    err = capsys.readouterr().err
    assert "report: skipped 3 entries of the logdir" in err and "linked: a symlink" in err
    only_link = tmp_path / "only"
    only_link.mkdir()
    (only_link / "r").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    assert cli(["report", str(only_link)]) == 2
    err = capsys.readouterr().err
    # the reason is the message (issue 27 item 9; was: "no GPU profiles found ... Left out: r (...)")
    assert err.startswith("tb-gpu-advisor report: error: No GPU profiles read: 1 symlink out of the logdir")
    assert "'r' points outside the logdir, and nothing outside it is read" in err


def test_a_logdir_of_symlinked_runs_says_so_and_reads_them_with_the_flag(tmp_path, capsys):
    """Issue 27 item 9: runs linked from elsewhere in the logdir are named as the reason nothing was read, with the
    option that reads them; --follow-symlinks does (a link out of the logdir never)."""
    logdir = tmp_path / "logdir"
    (logdir / "store" / "a").mkdir(parents=True)
    shutil.copy(RANK, logdir / "store" / "a" / RANK.name)
    (logdir / "runs").mkdir()
    (logdir / "runs" / "a").symlink_to(logdir / "store" / "a", target_is_directory=True)
    assert cli(["report", str(logdir / "runs")]) == 2  # the links point outside runs/: never followed
    assert "symlink out of the logdir" in capsys.readouterr().err
    assert cli(["report", str(logdir / "runs"), "--follow-symlinks"]) == 2
    assert "symlink out of the logdir" in capsys.readouterr().err
    (logdir / "b").symlink_to(logdir / "store" / "a", target_is_directory=True)
    shutil.rmtree(logdir / "runs")
    assert {s.run for s in discover(str(logdir))} == {"store/a"}
    assert cli(["report", str(logdir), "--list"]) == 0
    assert "b: a symlink: not followed unless asked (--follow-symlinks" in capsys.readouterr().err
    assert cli(["report", str(logdir), "--list", "--follow-symlinks"]) == 0
    out, err = capsys.readouterr()
    assert "b/" in out and "store/a/" in out and "skipped" not in err
    only = tmp_path / "only"
    only.mkdir()
    shutil.copytree(logdir / "store", only / "store")
    (only / "run").symlink_to(only / "store" / "a", target_is_directory=True)
    shutil.rmtree(only / "store" / "a")
    (only / "store" / "a").mkdir()
    (only / "store" / "a" / "notes.txt").write_text("x")
    assert cli(["report", str(only)]) == 2
    err = capsys.readouterr().err
    assert "No GPU profiles read: 1 symlink in the logdir not followed" in err and "--follow-symlinks" in err


def test_a_file_outside_any_layout_never_lists_its_ancestors(tmp_path, monkeypatch):
    """``report /some/where/h.xplane.pb`` with no logdir layout around the file: no folder above it is walked (it used
    to discover every ancestor up to ``/``, ``/proc`` included), the file is read alone; a file in its layout is
    still found."""
    from tb_gpu_advisor.discover import logdir as discovery

    walked = []
    real = discovery.discover
    monkeypatch.setattr(discovery, "discover", lambda folder, *a: walked.append(folder) or real(folder, *a))
    stray = tmp_path / "a" / "b" / "h.xplane.pb"
    stray.parent.mkdir(parents=True)
    stray.write_bytes(b"\x0a\x00")
    alone = discovery.locate_file(str(stray))  # read alone, by its name (``diff BASE.xplane.pb NEW.xplane.pb``)
    assert alone is not None and alone[2].host == "h" and alone[1].hosts == (alone[2],) and walked == []
    config = tmp_path / "a" / "b" / "config.json"  # named like a trace could be, but is none: its folder only
    config.write_text("{}")
    assert discovery.locate_file(str(config)) is None and walked == [str(config.parent)]
    walked.clear()
    logdir = tmp_path / "logdir"
    (logdir / "run").mkdir(parents=True)
    (logdir / "run" / "trace.json").write_bytes(gzip.decompress(RANK.read_bytes()))
    found = discovery.locate_file(str(logdir / "run" / "trace.json"))
    assert found is not None and found[2].host == "trace" and all(str(tmp_path) in w for w in walked)


def test_a_rocprof_trace_is_read_as_rocprofs_not_refused(tmp_path):
    """``rocprof --hip-trace`` writes ``results.json``, a chrome trace whose processes are ``CPU HIP API`` / ``COPY``
    / ``GPU<n>`` and whose events carry ``BeginNs`` / ``DurationNs`` (read off two real ones: HGLiu1998/batched_gemm
    and shashankparsi/HIP_Programming, MI300X and MI300A, no licence: not kept).  Main named it "a format the Advisor
    does not read" and exited 2; it is now read (``formats.rocprof``): a window of one HIP call is a report of a
    window with no GPU work, in HIP's words."""
    run = tmp_path / "logdir" / "rocm"
    run.mkdir(parents=True)
    events = [{}, {"args": {"name": "CPU HIP API"}, "ph": "M", "pid": 2, "name": "process_name", "sort_index": 0},
              {"args": {"name": "GPU0"}, "ph": "M", "pid": 6, "name": "process_name", "sort_index": 2},
              {"ph": "X", "name": "hipLaunchKernel", "pid": "2", "tid": "19147", "ts": "622109243450", "dur": "956",
               "args": {"BeginNs": "622109243450309", "EndNs": "622109244407161", "Name": "hipLaunchKernel",
                        "DurationNs": "956852"}}]
    (run / "results.json").write_text(json.dumps({"traceEvents": events}))
    assert "rocm/results.json" not in dict(skipped(str(tmp_path / "logdir")))
    assert [h.format for s in discover(str(tmp_path / "logdir")) for h in s.hosts] == ["rocprof"]
    assert cli(["report", str(run / "results.json")]) != 2


def test_a_memory_timeline_is_named_as_such_with_what_to_analyse_instead(tmp_path):
    """``prof.export_memory_timeline("x.json")`` writes ``[times_us, sizes_by_category]``: no event at all (survey
    h37-survey7b: cwilson51/CO-Colloquium-Pytorch-profiler's ``train_batch_128_nworkers_6_memory_broken.json``).
    Main said only "JSON without traceEvents: not a trace"; the user is told what the file is and what to analyse."""
    run = tmp_path / "logdir" / "timeline"
    run.mkdir(parents=True)
    times = [1726077563878112, 1726077563891027, 1726077563891064]
    sizes = [[0, 4096, 0, 0, 0, 0, 0, 0], [0, 4096, 2048, 0, 0, 0, 0, 0], [0, 4096, 0, 512, 0, 0, 0, 0]]
    (run / "train_memory.json").write_text(json.dumps([times, sizes]))
    skips = dict(skipped(str(tmp_path / "logdir")))
    reason = skips["timeline/train_memory.json"]
    assert "memory timeline" in reason and "export_memory_timeline" in reason and "_dump_snapshot" in reason
    assert cli(["report", str(run / "train_memory.json")]) == 2
    (run / "other.json").write_text(json.dumps([[1, 2], [3, 4]]))  # small numbers: no timestamps, no such name
    assert dict(skipped(str(tmp_path / "logdir")))["timeline/other.json"] == "JSON without traceEvents: not a trace"


def test_a_raw_memory_timeline_is_named_as_such_too(tmp_path):
    """``export_memory_timeline("x.raw.json.gz")`` writes one ``[time_ns, action, bytes, category]`` per allocation
    and free, ``-1`` for the time of what was live before the profile (survey h37-survey17:
    tonghuikang/optimizer-memory-profiles' ``profiling/modal_gpu_adam/profile.raw.json.gz``, a ResNet under Adam on a
    GPU).  Main said only "JSON without traceEvents: not a trace"; it is named with what to analyse instead."""
    run = tmp_path / "logdir" / "timeline"
    run.mkdir(parents=True)
    events = [[-1, 1, 37632, 0], [-1, 1, 602112, 2], [1756681317989302283, 3, 8192, 5],
              [1756681317989303899, 4, -8192, 5]]
    with gzip.open(run / "profile.raw.json.gz", "wt") as f:
        json.dump(events, f)
    reason = dict(skipped(str(tmp_path / "logdir")))["timeline/profile.raw.json.gz"]
    assert "memory timeline" in reason and "raw form" in reason and "_dump_snapshot" in reason
    assert cli(["report", str(run / "profile.raw.json.gz")]) == 2
    (run / "other.json").write_text(json.dumps([[-1, 2, 3], [4, 5, 6]]))  # a -1 first, not four numbers: no name
    assert dict(skipped(str(tmp_path / "logdir")))["timeline/other.json"] == "JSON without traceEvents: not a trace"


def test_a_memory_timeline_page_is_named_as_such_too(tmp_path, capsys):
    """``export_memory_timeline("x.html")`` writes a matplotlib plot as one PNG under PyTorch's fixed title "GPU Memory
    Timeline HTML", no data (survey h37-survey17: tonghuikang/optimizer-memory-profiles' ``profiling/*/profile.html``).
    Main refused it in the generic words for an HTML page ("not PyTorch's memory viewer page"); it is named as the
    timeline, with what to analyse instead, in the same words as the timeline's JSON forms.  Another page keeps the
    generic words."""
    run = tmp_path / "logdir" / "modal_gpu_adam"
    run.mkdir(parents=True)
    page = run / "profile.html"
    page.write_text("<html>\n<head><meta charset=\"utf-8\" /><title>GPU Memory Timeline HTML</title></head>\n"
                    "<body>\n  <img src='data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAB9A='>\n</body>\n</html>\n")
    (run / "index.html").write_text("<html><head><title>Results</title></head><body>loss 0.31</body></html>\n")
    skips = dict(skipped(str(tmp_path / "logdir")))
    reason = skips["modal_gpu_adam/profile.html"]
    assert "memory timeline" in reason and "export_memory_timeline" in reason and "_dump_snapshot" in reason
    assert "not PyTorch's memory viewer page" in skips["modal_gpu_adam/index.html"]
    assert cli(["report", str(page)]) == 2
    assert "torch.profiler's memory timeline" in capsys.readouterr().err
