"""A memory snapshot saved with ``torch.save`` under ``torch.save``'s own names (``.pt``, ``.pth``) is read; a
checkpoint of those names is left out without a word (issue #37 class 5, deliverable 6; session 70 hunt70c).

``torch.save(torch.cuda.memory._snapshot(), "memory_snapshot.pt")`` -- the convention ``torch.save``'s documentation
gives -- writes the snapshot's dict as the zip archive session 69 taught the reader (``<archive>/data.pkl``).  Base
dbf6cf15 read that archive only under a pickle's name: the same file named ``.pt`` was "not a profile this tool
reads" given by path, and a logdir holding it "no GPU profiles found".  Most ``.pt`` files are checkpoints, so the
content alone decides (the archive's pickle opening a snapshot, from its first bytes: a 10 GB checkpoint is sniffed
in its first kilobytes), and one that is no snapshot is nobody's business here: no "left out" line for ``model.pt``.
Truth by construction (``synthetic.memsnapshot.write_torch_save``, the record order of ``torch/serialization.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.discover.logdir import discover, locate_file, skipped
from tests.support.snapshot_reports import memory_reading


@pytest.mark.parametrize("name", ["memory_snapshot.pt", "snapshot_rank0.pth"])
def test_a_torch_save_snapshot_under_a_pt_name_is_read(tmp_path: Path, name: str):
    """Found in its logdir and given by path, read event for event as the pickle of the same dict."""
    doc = ms.training_iterations().doc
    saved = ms.write_torch_save(str(tmp_path / "run" / name), doc)
    plain = ms.write(str(tmp_path / "plain" / "snapshot.pickle"), doc)
    sessions = discover(str(tmp_path / "run"))
    assert [(h.format, h.path) for s in sessions for h in s.hosts] == [("snapshot", saved)]
    assert sessions[0].hosts[0].host == name.rsplit(".", 1)[0]
    located = locate_file(saved)
    assert located is not None and located[2].format == "snapshot"
    assert memory_reading(saved) == memory_reading(plain)


def test_a_checkpoint_named_pt_is_left_out_silently(tmp_path: Path):
    """Control: a ``torch.save`` archive of a model's state (no snapshot), a legacy non-zip ``.pt``, a ``.pth`` of
    text and a checkpoint's Git LFS pointer (a real one's bytes: the torchrun tutorial's ``snapshot.pt``, kept in LFS)
    beside a snapshot: the snapshot alone is read, and none of them is listed as a profile left out -- while a
    pointer under a pickle's (or a CSV's) name still says it is one (``tests/formats/test_lfs_pointer.py``)."""
    run = tmp_path / "run"
    ms.write_torch_save(str(run / "model.pt"), {"model": {"layer.weight": [0.0] * 4}, "epoch": 3})
    (run / "legacy.pt").write_bytes(b"\x80\x02\x8a\nl\xfc\x9cF\xf9 j\xa8P\x19.")  # torch's old magic number pickle
    (run / "notes.pth").write_text("not a tensor file\n")
    pointer = ("version https://git-lfs.github.com/spec/v1\n"
               "oid sha256:b9b2fc4be7332f7e6ddd50023460281011fa0e0b789184df3f11720f32ad0b9b\nsize 1630\n")
    (run / "snapshot.pt").write_text(pointer)
    (tmp_path / "pickled").mkdir()
    (tmp_path / "pickled" / "memory_snapshot.pickle").write_text(pointer)
    (tmp_path / "pickled" / "kernels.csv").write_text(pointer)  # a profiler's CSV kept in LFS: still said
    snap = ms.write(str(run / "snapshot.pickle"), ms.training_iterations().doc)
    sessions = discover(str(run))
    assert [(h.format, h.path) for s in sessions for h in s.hosts] == [("snapshot", snap)]
    assert skipped(str(run)) == []
    assert sorted((rel, why[:22]) for rel, why in skipped(str(tmp_path / "pickled"))) == [
        ("kernels.csv", "a Git LFS pointer, not"), ("memory_snapshot.pickle", "a Git LFS pointer, not")]
