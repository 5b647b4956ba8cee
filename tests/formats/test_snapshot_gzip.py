"""A memory snapshot gzipped for upload (``snapshot.pickle.gz``) is read as the pickle it holds, through the one
gzip reader (``formats/gz.gunzip_upto``), never inflated past the size limit a plain file has: a gzip bomb
is refused in words.

Truth: the same file decompressed by Python's ``gzip`` and read as a plain pickle -- the kept real snapshots of
``tests/fixtures/snapshots_wild`` (gzipped there, MIT) and ``tests/fixtures/wild/snapshot_adam_iterations`` (a plain
pickle gzipped here).  On main a ``.pickle.gz`` was "not a profile this tool reads".
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
from pathlib import Path

import pytest

from synthetic import hostile_inputs as hi
from tb_gpu_advisor.cli.main import main as cli
from tests.support.paths import REPO

SNAPSHOTS = REPO / "tests" / "fixtures" / "snapshots_wild"
ADAM = REPO / "tests" / "fixtures" / "wild" / "snapshot_adam_iterations" / "forward_and_backward_memory_snapshot_200.pickle"


def _report(path: Path, capsys) -> tuple[int, dict | None, str]:
    rc = cli(["report", str(path), "--cache-dir", "off", "--format", "json"])
    out, err = capsys.readouterr()
    return rc, (json.loads(out) if out.strip() else None), err


#: What names the file, not what it holds: its place, its size on disk, when the report was made.
_FILE_KEYS = {"logdir", "path", "size_bytes", "generated_at"}


def _comparable(rep):
    """A report without the keys that name its file (:data:`_FILE_KEYS`), recursively."""
    if isinstance(rep, dict):
        return {k: _comparable(v) for k, v in rep.items() if k not in _FILE_KEYS}
    if isinstance(rep, list):
        return [_comparable(v) for v in rep]
    return rep


def _both(tmp_path: Path, name: str, plain: bytes, capsys) -> tuple[dict, dict, dict]:
    """The gzipped and the plain file's reports, comparable, and the gzipped one's JSON."""
    a, b = tmp_path / "gz" / "run", tmp_path / "plain" / "run"
    a.mkdir(parents=True), b.mkdir(parents=True)
    (a / f"{name}.pickle.gz").write_bytes(gzip.compress(plain, mtime=0))
    (b / f"{name}.pickle").write_bytes(plain)
    for p in (a / f"{name}.pickle.gz", b / f"{name}.pickle"):
        os.utime(p, (1_700_000_000, 1_700_000_000))  # one session name (a snapshot's is its file's time)
    rc_gz, gz, err_gz = _report(a / f"{name}.pickle.gz", capsys)
    rc_plain, pl, err_plain = _report(b / f"{name}.pickle", capsys)
    assert rc_gz == rc_plain and err_gz.replace(str(a), "<run>").replace(".pickle.gz", ".pickle") == \
        err_plain.replace(str(b), "<run>")
    assert gz is not None and pl is not None
    assert gz["reports"][0]["hosts"][0]["size_bytes"] < pl["reports"][0]["hosts"][0]["size_bytes"]  # the gzip read
    return _comparable(gz), _comparable(pl), gz


@pytest.mark.parametrize("name", ["forward_autograd_cs336", "windows_training_cs336"])
def test_a_kept_gzipped_snapshot_reads_as_its_pickle(tmp_path: Path, name: str, capsys):
    plain = gzip.decompress((SNAPSHOTS / f"{name}.pickle.gz").read_bytes())
    gz, pl, doc = _both(tmp_path, name, plain, capsys)
    assert gz == pl
    assert doc["reports"][0]["hosts"][0]["error"] is None and "peak_allocated_bytes" in json.dumps(gz)


def test_a_real_pickle_gzipped_here_reads_as_the_pickle(tmp_path: Path, capsys):
    gz, pl, doc = _both(tmp_path, "snapshot", ADAM.read_bytes(), capsys)
    assert gz == pl
    assert doc["reports"][0]["hosts"][0]["error"] is None and "peak_allocated_bytes" in json.dumps(gz)


def test_a_gzip_bomb_is_refused_in_words_without_inflating_it(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("TB_GPU_ADVISOR_MAX_PROFILE_BYTES", str(64 << 20))
    run = tmp_path / "run"
    run.mkdir()
    bomb = hi.gzip_bomb(512)  # 512 MiB inflated
    assert len(bomb) < 1 << 20
    res = hi.run_bounded(bomb, str(run / "snapshot.pickle.gz"), seconds=30, memory_mb=512)
    assert res["outcome"] == "error", res
    assert "decompresses past the 67,108,864-byte limit: refused, not inflated" in res["message"], res


def test_a_cut_gzip_snapshot_is_an_error_not_a_crash(tmp_path: Path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    data = (SNAPSHOTS / "forward_no_grad_cs336.pickle.gz").read_bytes()
    (run / "cut.pickle.gz").write_bytes(data[: len(data) // 2])
    rc, rep, err = _report(run / "cut.pickle.gz", capsys)
    assert rc == 2 and "Traceback" not in err and "a gzip file cut off or corrupt after" in err, err


def test_a_gzipped_snapshot_is_found_in_a_logdir(tmp_path: Path, capsys):
    run = tmp_path / "logs" / "run1"
    run.mkdir(parents=True)
    shutil.copy(SNAPSHOTS / "forward_no_grad_cs336.pickle.gz", run / "fwd.pickle.gz")
    rc, rep, err = _report(tmp_path / "logs", capsys)
    assert "not a profile this tool reads" not in err, err
    assert rep is not None and "fwd" in json.dumps(rep), (rc, err)
