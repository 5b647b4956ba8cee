"""A memory snapshot saved under no suffix is read by its content; a ``torch.save`` checkpoint given by path is named
as one (issue #37 class 5, deliverable 5; session 70 snap70, hunt70c's *Left* 1-2).

Real writers (hunt70c's ``find_string``): a training loop's ``torch.save(torch.cuda.memory_snapshot(),
f"workspace/all/ss_{epoch}")``, and ``torch.cuda.memory._dump_snapshot("mem")`` -- neither names a suffix.  Base
dbf6cf15 trusted the name: given by path "not a profile this tool reads", in a logdir "no GPU profiles found".
Discovery rule now: a run folder's file whose name has no ``.`` at all is sniffed (its first 4 KiB, nothing
unpickled) and read only when those bytes open a snapshot; any other such file (a README, a program) is left out
without a word.  Given by path, a file under any name no layout reads is read when its content is a snapshot
(``mem.bin``).  A ``.pt`` / ``.pth`` checkpoint given by path was the generic "not a profile"; it is now "a torch.save
checkpoint (model/optimizer state), not a memory snapshot".  Truth by construction (``synthetic.memsnapshot``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.discover.logdir import discover, locate_file, skipped
from tb_gpu_advisor.runtime.advisor import why_not_read
from tests.support.snapshot_reports import memory_reading


@pytest.mark.parametrize("saved_as", ["torch_save", "pickle"])
def test_a_suffixless_snapshot_is_read_in_its_logdir_and_by_path(tmp_path: Path, saved_as: str):
    doc = ms.training_iterations().doc
    plain = ms.write(str(tmp_path / "plain" / "snapshot.pickle"), doc)
    path = str(tmp_path / "run" / "ss_3")
    (ms.write_torch_save if saved_as == "torch_save" else ms.write)(path, doc)
    (tmp_path / "run" / "README").write_text("epoch snapshots\n")
    (tmp_path / "run" / "train").write_bytes(b"\x7fELF\x02\x01\x01" + bytes(100))  # a program
    sessions = discover(str(tmp_path / "run"))
    assert [(h.format, h.host, h.path) for s in sessions for h in s.hosts] == [("snapshot", "ss_3", path)]
    assert skipped(str(tmp_path / "run")) == []  # the README and the program: not a word
    located = locate_file(path)
    assert located is not None and located[2].format == "snapshot"
    assert memory_reading(path) == memory_reading(plain)


def test_a_snapshot_under_any_other_name_is_read_given_by_path(tmp_path: Path):
    path = ms.write(str(tmp_path / "mem.bin"), ms.training_iterations().doc)
    located = locate_file(path)
    assert located is not None and located[2].format == "snapshot" and located[2].host == "mem.bin"
    assert discover(str(tmp_path)) == []  # in a walk an unknown suffix is never read


@pytest.mark.parametrize("name", ["model.pt", "ckpt.pth", "legacy.pt", "checkpoint_7"])
def test_a_checkpoint_given_by_path_is_named_a_checkpoint(tmp_path: Path, name: str):
    path = str(tmp_path / name)
    if name == "legacy.pt":
        Path(path).write_bytes(b"\x80\x02\x8a\nl\xfc\x9cF\xf9 j\xa8P\x19." + b"\x80\x02M\xe9\x03.")
    else:
        ms.write_torch_save(path, {"MODEL_STATE": {"layer.weight": [0.0] * 4}, "EPOCHS_RUN": 3})
    assert locate_file(path) is None
    why = why_not_read(path) or ""
    assert why.startswith("a torch.save checkpoint (model/optimizer state), not a memory snapshot")
    assert skipped(str(tmp_path)) == []  # in its folder: left out without a word


def test_other_files_given_by_path_keep_the_generic_words(tmp_path: Path):
    """Control (passes on base): a README or a text ``.pth`` given by path is no checkpoint and no snapshot."""
    for name, text in (("README", "hello\n"), ("notes.pth", "not a tensor file\n")):
        (tmp_path / name).write_text(text)
        assert locate_file(str(tmp_path / name)) is None
        assert not why_not_read(str(tmp_path / name))
