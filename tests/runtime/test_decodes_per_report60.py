"""How often one ``report`` decodes each Kineto file whole (``parse_trace``), counted, never timed (h37-reads60; the
review of session 59 *Left*: the layout's id check and the peers' start-up each decode files the report decodes again).

All three are controls (pass on BASE 3416ad6f too): they hold the counts ``benchmarks/reads_once.py`` measures, so a
change that decodes a file more often than this fails here.  Ranks in one folder (real ``tp_rtx4090_two_ranks``): each file once.  Ranks in their own
folders (``write_one_gpu_apart`` + ``into_rank_folders``, 4 ranks): each file once for its own report, and each
peer at most once more per process for its one-time spans (``runtime.pipeline.peer_start_up``, kept by file in
``_START_UPS``) -- 2N - 1 in all, and N for the same reports asked again in the process."""

from __future__ import annotations

import io
import json
import shutil
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from synthetic import torchtrace as tt
from tests.support.decodes import count_decodes

WILD = Path(__file__).resolve().parents[1] / "fixtures" / "wild"


def _report(*args: str) -> dict:
    from tb_gpu_advisor.cli import main as cli

    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        cli.main(["report", *args, "--format", "json", "--cache-dir", "off"])
    return json.loads(out.getvalue())


def test_ranks_in_one_folder_are_each_decoded_once(monkeypatch, tmp_path):
    decodes = count_decodes(monkeypatch)
    run = tmp_path / "tp_rtx4090_two_ranks"  # the real 2 ranks alone (the wild logdir's other runs are not this test's)
    shutil.copytree(WILD / "tp_rtx4090_two_ranks", run)
    _report(str(run))
    assert sorted(decodes.values()) == [1] * 2, decodes


def test_ranks_in_their_own_folders_each_decode_their_peers_once_a_process(monkeypatch, tmp_path):
    made = tt.write_one_gpu_apart(str(tmp_path), gpus=4, steps=6)
    tt.into_rank_folders(made["paths"])
    decodes = count_decodes(monkeypatch)
    names = sorted(Path(p).name for p in made["paths"])
    first = _report(str(tmp_path / "one_gpu_apart"))
    assert sorted(r["run"] for r in first["reports"]) == ["rank0", "rank1", "rank2", "rank3"]
    assert sorted(decodes) == names and sum(decodes.values()) == 2 * 4 - 1, decodes
    assert max(decodes.values()) == 2
    decodes.clear()
    again = _report(str(tmp_path / "one_gpu_apart"))
    assert sorted(decodes.values()) == [1] * 4, decodes  # the peers' spans kept in the process
    assert [r["hosts"] for r in again["reports"]] == [r["hosts"] for r in first["reports"]]
