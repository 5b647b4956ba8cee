"""A host's cached report is not the report of the same files once another machine's files say another rank for it
(h37-debt47).

A Kineto file that states no rank joins its job and reads as the one rank the job's world misses
(``formats.kineto.layout._inferred_rank``, h37-probe46r).  That rank depends on the other machines' files: remove
rank 0's file and two ranks are missing, so none is said; add it back and the rank is said again.  A host's cache
key (``runtime.cache.host_key``) held only the host's own files, so the per-host entry a session of several hosts
stores came back with the rank of the files that were there before.

By construction (``synthetic.torchtrace.ddp_job(2, 2)``: ranks 0, 1 on node0, ranks 2, 3 on node1; rank 3's file
without ``distributedInfo``).  Truth, read without a cache: with rank 0's file, node1's GPU 1 is rank 3; without it,
no rank.  BASE 3b05c8b4 returned the other reading from the cache, both ways.
"""

from __future__ import annotations

import io
import json
import shutil
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.cli import main as cli
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.cache import make_key


def _ranks(logdir: Path, cache: str) -> dict[tuple[str, int], Any]:
    """(host, GPU) -> the rank the report says, from ``report LOGDIR --format json --cache-dir CACHE`` in-process."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        assert cli.main(["report", str(logdir), "--format", "json", "--cache-dir", cache]) in (0, 1)
    (report,) = json.loads(out.getvalue())["reports"]
    return {(h["host"], g["gpu"]): g.get("rank") for h in report["hosts"] for g in h["gpus"]}


@pytest.fixture()
def job(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(the logdir, rank 0's file, a copy of it outside the logdir): two machines' four ranks, rank 3's file
    rankless."""
    logdir = tmp_path / "logs"
    paths = tt.write_run(str(logdir), tt.ddp_job(2, 2), steps=4, run="job")
    doc = json.loads(Path(paths[3]).read_text())
    doc.pop("distributedInfo")
    tt.write_doc(paths[3], doc)
    kept = tmp_path / "rank0.json"
    shutil.copy2(paths[0], kept)
    return logdir, Path(paths[0]), kept


WITH_RANK0 = {("node0", 0): 0, ("node0", 1): 1, ("node1", 0): 2, ("node1", 1): 3}
WITHOUT_RANK0 = {("node0_4101", 1): 1, ("node1", 0): 2, ("node1", 1): None}


def test_the_truth_without_a_cache(job: tuple[Path, Path, Path]) -> None:
    logdir, rank0, _ = job
    assert _ranks(logdir, "off") == WITH_RANK0
    rank0.unlink()
    assert _ranks(logdir, "off") == WITHOUT_RANK0


def test_removing_rank0s_file_is_not_read_from_the_cache(job: tuple[Path, Path, Path], tmp_path: Path) -> None:
    logdir, rank0, _ = job
    cache = str(tmp_path / "cache")
    assert _ranks(logdir, cache) == WITH_RANK0
    rank0.unlink()
    assert _ranks(logdir, cache) == WITHOUT_RANK0  # BASE: node1's GPU 1 still rank 3


def test_adding_rank0s_file_is_not_read_from_the_cache(job: tuple[Path, Path, Path], tmp_path: Path) -> None:
    logdir, rank0, kept = job
    cache = str(tmp_path / "cache")
    rank0.unlink()
    assert _ranks(logdir, cache) == WITHOUT_RANK0
    shutil.copy2(kept, rank0)
    assert _ranks(logdir, cache) == WITH_RANK0  # BASE: node1's GPU 1 still rankless


def test_a_host_without_an_inferred_rank_keeps_its_key() -> None:
    """Keys of hosts whose files state their ranks keep their earlier form: no cache entry made before is lost."""
    plain = HostFile("node0", "/l/a.pt.trace.json", 10, 20, "kineto")
    said = HostFile("node0", "/l/a.pt.trace.json", 10, 20, "kineto", inferred_rank=3)
    assert '"inferred_ranks"' not in make_key("r", "s", [plain]).material
    assert make_key("r", "s", [plain]).digest != make_key("r", "s", [said]).digest
    in_ranks = HostFile("node0", "/l/a.pt.trace.json", 30, 20, "kineto", ranks=(plain, said))
    assert '"inferred_ranks"' in make_key("r", "s", [in_ranks]).material


def test_the_tabs_in_memory_key_holds_the_inferred_rank() -> None:
    """The tab keeps reports in memory by ``serve.plugin._report_key``: the same files with another inferred rank (or
    none) are another key there too."""
    from tb_gpu_advisor.serve import plugin

    plain = HostFile("node1", "/l/b.pt.trace.json", 10, 20, "kineto")
    said = HostFile("node1", "/l/b.pt.trace.json", 10, 20, "kineto", inferred_rank=3)
    assert plugin._identity(plain) != plugin._identity(said)
    assert plugin._identity(said) == plugin._identity(HostFile("node1", "/l/b.pt.trace.json", 10, 20, "kineto",
                                                               inferred_rank=3))
