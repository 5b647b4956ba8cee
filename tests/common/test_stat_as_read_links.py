"""``fsio.stat_as_read`` reaches a listed file as its reader does (``open_listed``): a hostile link on the way --
a linked folder, a linked file, an absolute link, a ``..`` climb -- keys nothing outside the logdir (h37-review34)."""

import os

import pytest

from tb_gpu_advisor.common import fsio
from tb_gpu_advisor.common.fsio import Listed


@pytest.fixture
def tree(tmp_path):
    """A logdir ``log`` with a run folder, and a secret file outside it."""
    log, out = tmp_path / "log", tmp_path / "out"
    (log / "run").mkdir(parents=True)
    out.mkdir()
    (out / "secret.json").write_bytes(b"x" * 77)
    (log / "run" / "own.json").write_bytes(b"y" * 5)
    return log, out


def _listed(log, *rel, follow=False):
    return Listed(os.path.join(str(log), *rel), str(log), rel, follow=follow)


@pytest.mark.parametrize("follow", [False, True])
def test_a_linked_folder_out_of_the_logdir_is_not_stated(tree, follow):
    log, out = tree
    (log / "away").symlink_to(out, target_is_directory=True)  # a folder on the way links out
    path = _listed(log, "away", "secret.json", follow=follow)
    assert fsio.stat_as_read(path) is None
    with pytest.raises(OSError):
        fsio.open_listed(path)


@pytest.mark.parametrize("target", ["absolute", "climb"])
def test_a_linked_file_out_of_the_logdir_is_not_stated_even_when_links_are_followed(tree, target):
    log, out = tree
    to = out / "secret.json" if target == "absolute" else os.path.join("..", "..", "out", "secret.json")
    (log / "run" / "beside.json").symlink_to(to)
    assert fsio.stat_as_read(_listed(log, "run", "beside.json", follow=True)) is None
    assert fsio.stat_as_read(_listed(log, "run", "beside.json", follow=False)) is None


def test_a_link_inside_the_logdir_is_stated_only_where_its_listing_follows_links(tree):
    log, _ = tree
    (log / "run" / "beside.json").symlink_to("own.json")
    st = os.stat(log / "run" / "own.json")
    assert fsio.stat_as_read(_listed(log, "run", "beside.json", follow=True)) == (5, st.st_mtime_ns)
    assert fsio.stat_as_read(_listed(log, "run", "beside.json", follow=False)) is None
    assert fsio.stat_as_read(_listed(log, "run", "own.json")) == (5, st.st_mtime_ns)
    assert fsio.stat_as_read(_listed(log, "run")) is None  # a folder: no file to read
    assert fsio.stat_as_read(_listed(log, "run", "absent.json")) is None
