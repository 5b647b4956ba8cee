"""The same logdir gives the same report on every analysis path, where the job's ranks sit in sibling run folders and
their peers' one-time costs are placed on each rank's clock (h37-ranks60; ranks59 *Left*).

h37-ranks59 placed a peer rank's one-time spans (module loads, compiles: ``job.peers``) on a rank's clock where the
rank folders are one machine's -- on the CLI's one-process path and the tab's isolated one-host child only.  The
parallel workers (``analyze_session_parallel``), the isolated per-host children (the tab and the MCP server with
several hosts), the per-host cache (``cached_host_reports``) and precompute ``--shard`` analysed each host without
them, and the per-host cache's key did not hold them: one logdir, two readings.  And the one path that passed them
gave every host of a session the peers of its FIRST host's clock: a folder per LOCAL rank on two machines
(``rank0/`` holding ranks 0 and 2 of two nodes) placed node0's load on node1's timeline.

Now each host asks ``pipeline.clock_files`` (its own clock's files among ``RankRuns.files``, by
``RankRuns.clocks``), read where it is analysed; the host key holds the rank runs as the session key does.

Truth: by construction (``synthetic.torchtrace.write_load_through_exchange(rank_folders=True, peers_load=False,
nodes=2, ranks=4)``: node0's rank 0 alone loads for 12 ms; every other rank's all-to-all waits through it -- on node0
a start-up placed from rank 0's file, on node1 another machine's clock, which nothing places: exposed, as the
ranks59 control reads two machines), and the real MIT pair ``wild/tp_rtx4090_two_ranks`` moved into ``rank0/`` and
``rank1/`` (its two files count on one clock, ``tests/formats/test_kineto_clock59.py``).
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
from pathlib import Path

import pytest

from synthetic import torchtrace as tt
from tests.support.paths import TP_PAIR, in_rank_folders

#: report fields that say when or how long, not what
_VOLATILE = {"analysis_s", "analysed_at", "elapsed_s", "generated_at", "created"}


def _strip(o):
    if isinstance(o, dict):
        return {k: _strip(v) for k, v in o.items() if k not in _VOLATILE}
    if isinstance(o, list):
        return [_strip(x) for x in o]
    return o


def _reports_on_every_path(logdir: Path, tmp: Path) -> dict[str, dict[str, dict]]:
    """session -> path name -> its report (JSON as a dict), for every path runtime/ analyses a session by."""
    from tb_gpu_advisor.cli import precompute
    from tb_gpu_advisor.runtime import session as rs
    from tb_gpu_advisor.runtime.advisor import Advisor
    from tb_gpu_advisor.runtime.cache import ReportCache

    advisor = Advisor(str(logdir), cache=ReportCache("off"))
    shard_cache = ReportCache(str(tmp / "shard"))
    precompute.precompute_shard(str(logdir), (0, 1), jobs=1, cache=shard_cache, out=io.StringIO())
    quiet = lambda *a: None  # noqa: E731
    out: dict[str, dict[str, dict]] = {}
    for n, s in enumerate(advisor.sessions()):
        cache = ReportCache(str(tmp / f"cache{n}"))
        r = {
            "cli": advisor.report(s).report.to_json(),
            "parallel workers": rs.session_report(s, jobs=2).report.to_json(),
            "isolated (tab, MCP)": advisor.report(s, isolate=True, jobs=2).report.to_json(),
            "tab in process": rs.compute_json(s, s.hosts, progress=quiet, jobs=2),
            "tab isolated": rs.compute_json(s, s.hosts, progress=quiet, jobs=2, isolate=True),
            "per-host cache": rs.session_report(s, cache=cache, jobs=2).report.to_json(),
            "per-host cache, stored": rs.session_report(s, cache=cache, jobs=2).report.to_json(),
            "precompute --shard": rs.session_report(s, cache=shard_cache).report.to_json(),
            "tab from the shard": rs.compute_json(s, s.hosts, progress=quiet, cache=shard_cache),
        }
        out[s.stock_run] = {k: _strip(json.loads(v)) for k, v in r.items()}
    return out


def _gpu(report: dict, host: str) -> dict:
    (h,) = [h for h in report["hosts"] if h["host"].startswith(host)]
    (g,) = h["gpus"]
    return g


def _two_nodes(tmp: Path) -> Path:
    tt.write_load_through_exchange(str(tmp / "gen"), ranks=4, nodes=2, rank_folders=True, peers_load=False)
    return tmp / "gen" / "load_through_exchange"


def _pair_in_folders(tmp: Path) -> Path:
    """The real pair, each rank's file in ``rank<r>/`` (``tensorboard_trace_handler(f"{logdir}/rank{rank}")``)."""
    in_rank_folders(TP_PAIR, tmp / "pair")
    return tmp / "pair"


def test_each_host_of_a_folder_reads_the_peers_on_its_own_clock(tmp_path: Path) -> None:
    """A folder per local rank on two machines: ``rank1/`` holds node0's rank 1 and node1's rank 3.  Node0's rank 1
    waits through rank 0's load (its file, one machine's clock): start-up.  Node1's rank 3 counts on another clock,
    so nothing is placed on it: its wait stays exposed (BASE placed node0's load on node1 too: start-up 11.3 ms)."""
    from tb_gpu_advisor.runtime.advisor import Advisor
    from tb_gpu_advisor.runtime.cache import ReportCache

    advisor = Advisor(str(_two_nodes(tmp_path)), cache=ReportCache("off"))
    s = next(s for s in advisor.sessions() if s.run == "rank1")
    rank1 = json.loads(advisor.report(s).report.to_json())
    near, far = _gpu(rank1, "node0"), _gpu(rank1, "node1")
    assert near["breakdown"]["startup"] > 11.0 and near["collectives"]["AllToAll"][2] < 0.1, near["collectives"]
    assert far["breakdown"]["startup"] < 0.1 and far["collectives"]["AllToAll"][2] > 11.0, far["collectives"]


@pytest.mark.parametrize("logdir", ["synthetic two nodes", "real pair"])
def test_every_path_gives_the_same_report(logdir: str, tmp_path: Path) -> None:
    """Property: every session's report is the CLI's on every path (BASE: the parallel, isolated-per-host, per-host
    cache and shard paths placed no peer -- rank1's node0 read 11.3 ms exposed all-to-all there, 0.03 ms on the CLI;
    the real pair's shard read rank 1's ReduceScatter exposed 32.3 ms, the CLI 25.6)."""
    root = _two_nodes(tmp_path) if logdir.startswith("synthetic") else _pair_in_folders(tmp_path)
    reports = _reports_on_every_path(root, tmp_path)
    assert len(reports) == 2
    for run, paths in reports.items():
        cli = paths["cli"]
        assert cli["hosts"] and not any(h.get("error") for h in cli["hosts"])
        for name, report in paths.items():
            assert report == cli, (run, name)


def test_the_host_key_holds_the_peers_files(tmp_path: Path) -> None:
    """A host's report made with its peers' files is another entry once a peer's file changes (BASE: the host key
    held no rank run, so a stored host report outlived its peers' files)."""
    from tb_gpu_advisor.discover.logdir import discover
    from tb_gpu_advisor.runtime.cache import host_key

    root = _two_nodes(tmp_path)

    def key() -> str:
        s = next(s for s in discover(str(root)) if s.run.startswith("rank1"))
        return host_key(s, s.hosts[0]).material

    before = key()
    peer = next((root / "rank0").glob("node0_*"))
    os.utime(peer, ns=(peer.stat().st_atime_ns, peer.stat().st_mtime_ns + 10**9))
    assert key() != before


def test_control_a_session_without_rank_folders_keeps_its_key(tmp_path: Path) -> None:
    """Control (the same on BASE): a session whose ranks share one folder links no rank run; its host key is the
    earlier form."""
    from tb_gpu_advisor.discover.logdir import discover
    from tb_gpu_advisor.runtime.cache import host_key

    tt.write_load_through_exchange(str(tmp_path), peers_load=False)
    (s,) = discover(str(tmp_path / "load_through_exchange"))
    assert s.linked_ranks is None
    assert "rank_runs" not in json.loads(host_key(s, s.hosts[0]).material)
    assert dataclasses.replace(s, hosts=s.hosts[:1]).linked_ranks is None
