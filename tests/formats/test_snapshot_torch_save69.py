"""A memory snapshot saved with ``torch.save`` instead of ``pickle.dump`` is read as the pickle its archive holds
(issue #37 class 5, h37-snap69).

``torch.save(torch.cuda.memory._snapshot(), "snapshot.pickle")`` writes PyTorch's zip archive (1.6+): the same dict
pickled (protocol 2) as its first member ``<archive>/data.pkl``, stored uncompressed and aligned to 64 bytes
(``synthetic.memsnapshot.write_torch_save``, the record order of ``torch/serialization.py``'s ``_save``).  Main left
it out as "not a pickle" and the run said "No GPU profiles read".  Truth by construction: the archive reads as the
plain pickle of the same dict does, on both unpicklers (``unpickle._CPICKLE``); a cut archive is a cut, in words, and a
zip of anything else is refused saying what a snapshot is."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.formats.snapshot import layout, reader, unpickle
from tests.support import snapshot_paths as sp


def _reading(path: Path) -> tuple:
    t = reader.read_trace(str(path))
    (me,) = t.memory.values()
    return t.num_events, me.delta.tolist(), me.phase.tolist(), t.snapshot.state, t.producer.get("layout")


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_a_torch_save_archive_reads_as_its_pickle(tmp_path: Path, monkeypatch, compiled: bool):
    """Discovered as a snapshot and read event for event as ``pickle.dump``'s file of the same dict."""
    if compiled and sp.CPICKLE is None:
        pytest.skip("the compiled snapshot reader is not built")
    monkeypatch.setattr(unpickle, "_CPICKLE", sp.CPICKLE if compiled else None)
    doc = ms.training_iterations().doc
    saved = Path(ms.write_torch_save(str(tmp_path / "saved" / "snapshot.pickle"), doc))
    plain = Path(ms.write(str(tmp_path / "plain" / "snapshot.pickle"), doc))
    assert layout.sniff(str(saved)) is None
    assert _reading(saved) == _reading(plain)


def test_a_cut_archive_and_a_foreign_zip_are_refused_in_words(tmp_path: Path):
    """Half an archive has no central directory: a cut, said so.  A zip whose first member is no ``data.pkl`` is not
    torch.save's: left out, saying what to give."""
    import zipfile

    saved = Path(ms.write_torch_save(str(tmp_path / "snapshot.pickle"), ms.training_iterations().doc))
    cut = tmp_path / "cut.pickle"
    cut.write_bytes(saved.read_bytes()[: saved.stat().st_size // 2])
    with pytest.raises(reader.SnapshotReadError, match="cut off or corrupt") as got:
        reader.read_trace(str(cut))
    assert got.value.damage is not None and got.value.damage.what == "zip_cut"
    other = tmp_path / "other.pickle"
    with zipfile.ZipFile(other, "w") as z:
        z.writestr("notes.txt", "not a snapshot")
    assert "not torch.save's" in layout.sniff(str(other))


def test_a_legacy_torch_save_file_is_named_with_how_to_save_it(tmp_path: Path):
    """``_use_new_zipfile_serialization=False``: five pickles, the first torch's magic number -- refused saying what it
    is and how to save the snapshot (base: "no `segments` list")."""
    import pickle

    path = tmp_path / "snapshot.pickle"
    with open(path, "wb") as f:
        for x in (0x1950A86A20F9469CFC6C, 1001, {"protocol_version": 1001, "little_endian": True,
                                                        "type_sizes": {"short": 2, "int": 4, "long": 4}},
                  ms.training_iterations().doc, []):
            pickle.dump(x, f, protocol=2)
    with pytest.raises(reader.SnapshotReadError, match="legacy format"):
        reader.read_trace(str(path))
