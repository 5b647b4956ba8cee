"""A profile swapped for a symlink to a file outside the logdir, between listing and reading, is never served
(issue 27 item 12).

Before: discovery checked the symlink, then the file was opened by its path, following whatever link was there
by then: 372 of 3,003 ``/trace`` downloads served the outside file and ``/report`` analysed it under the run's
name in 4 of 10 tries.  Now every read of a listed file opens it below the logdir without following a link out
(``fsio.open_listed``: each component opened with ``O_NOFOLLOW`` from the one before, links inside the logdir
resolved there) and checks the file opened is the one listed (``st_dev``/``st_ino``).

A thread swaps the listed file for a link to an outside file and back, in a loop, while requests read it.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import threading
import time
from pathlib import Path
from urllib.parse import urlencode

import pytest
from tensorboard.backend import application
from tensorboard.plugins import base_plugin
from werkzeug import test as werkzeug_test
from werkzeug import wrappers

from tb_gpu_advisor.common import fsio
from tb_gpu_advisor.discover import logdir as discovery
from tb_gpu_advisor.serve import plugin as plugin_mod
from tb_gpu_advisor.serve.service import ReportService
from tests.support.paths import FIXTURES
from tests.support.plugin_client import PREFIX

TRACE = FIXTURES / "wild" / "amd_mi300x" / "bert_small.pt.trace.json.gz"
SECRET = b"OUTSIDE_SECRET_KERNEL"
NAME = "vm.1700000000000.pt.trace.json"


@pytest.fixture
def swap(tmp_path):
    """(logdir, listed file, outside file, start(), stop()): a thread swapping the listed file for a link out."""
    logdir, outside_dir = tmp_path / "logdir", tmp_path / "outside"
    (logdir / "run").mkdir(parents=True)
    outside_dir.mkdir()
    text = gzip.decompress(TRACE.read_bytes())
    listed = logdir / "run" / NAME
    listed.write_bytes(text)
    # the outside file: a valid trace too (so an analysis of it would succeed), its kernels renamed
    outside = outside_dir / "secret.pt.trace.json"
    kernel = b'"cat": "kernel",\n      "name": "'
    outside.write_bytes(text.replace(kernel, kernel + SECRET))
    assert SECRET in outside.read_bytes()
    keep = tmp_path / "keep"
    os.link(listed, keep)  # the listed file's inode, to swap back in
    stop = threading.Event()
    swaps = [0]

    def loop():  # the link is there 2/3 of the time: a read after a listing that saw the file mostly meets it
        while not stop.is_set():
            link = logdir / "run" / ".swap-link"
            os.symlink(outside, link)
            os.replace(link, listed)
            time.sleep(0.001)
            back = logdir / "run" / ".swap-back"
            os.link(keep, back)
            os.replace(back, listed)
            swaps[0] += 1
            time.sleep(0.0005)

    thread = threading.Thread(target=loop, daemon=True)
    yield logdir, listed, outside, thread, stop, swaps
    stop.set()
    thread.join(5)


def _client(logdir: Path, isolate: bool = False):
    ctx = base_plugin.TBContext(logdir=str(logdir), flags=argparse.Namespace(gpu_advisor_cache_dir="off"))
    plugin = plugin_mod.GpuAdvisorPlugin(ctx, service=ReportService(wait_s=0.05), settle_s=0, isolate=isolate)
    return werkzeug_test.Client(application.TensorBoardWSGI([plugin]), wrappers.Response)


def test_trace_downloads_never_serve_the_outside_file(swap):
    logdir, listed, outside, thread, stop, swaps = swap
    client = _client(logdir)
    (session,) = discovery.discover(str(logdir))
    url = f"{PREFIX}/trace?{urlencode({'run': 'run', 'session': session.session, 'host': session.hosts[0].host})}"
    whole = listed.read_bytes()
    thread.start()
    codes: dict[int, int] = {}
    deadline = time.monotonic() + 8
    n = 0
    while n < 1500 and time.monotonic() < deadline:
        r = client.get(url)
        body = r.get_data()
        codes[r.status_code] = codes.get(r.status_code, 0) + 1
        assert SECRET not in body, f"request {n} served the outside file"
        if r.status_code == 200:
            assert body == whole  # only ever the listed file, whole
        n += 1
    stop.set()
    assert swaps[0] > 50 and n > 200, (swaps[0], n)
    assert codes.get(200, 0) > 0, codes  # the listed file is still served when it is there


@pytest.mark.parametrize("isolate", [False, True], ids=["in-process", "worker-process"])
def test_report_never_analyses_the_outside_file(swap, isolate):
    """In TensorBoard's process, and in the limited worker process the real tab analyses in (the listed path is
    pickled there with its logdir and identity)."""
    logdir, listed, outside, thread, stop, swaps = swap
    thread.start()
    bodies = []
    deadline = time.monotonic() + 60
    # until both enough reports and enough swaps: on a loaded machine the swapping thread may get few turns while
    # ten reports are made, and a race that was barely run proves nothing
    while (len(bodies) < 10 or swaps[0] <= 20) and time.monotonic() < deadline:
        client = _client(logdir, isolate)  # a new TensorBoard each time: each request analyses the file again
        (session,) = discovery.discover(str(logdir)) or [None]
        if session is None:
            continue
        url = f"{PREFIX}/report?{urlencode({'run': 'run', 'session': session.session})}"
        r = client.get(url)
        # 202 while it computes; 404 when this poll's listing met the link (the file is then not listed at all)
        while r.status_code in (202, 404) and time.monotonic() < deadline:
            time.sleep(0.01)
            r = client.get(url)
        if r.status_code in (200, 500):
            bodies.append(r.get_data(as_text=True))
    stop.set()
    assert len(bodies) >= 5 and swaps[0] > 20, (len(bodies), swaps[0])
    assert not [b for b in bodies if SECRET.decode() in b], "a report analysed the outside file"


def test_a_listed_file_swapped_for_a_link_out_is_refused_by_its_open(tmp_path):
    """The open itself, without threads: listed, then replaced by a link out (or by another file) -> refused."""
    logdir = tmp_path / "logdir"
    (logdir / "run").mkdir(parents=True)
    listed = logdir / "run" / NAME
    listed.write_bytes(gzip.decompress(TRACE.read_bytes()))
    (session,) = discovery.discover(str(logdir))
    path = session.hosts[0].path
    assert fsio.read_head(path, 1) == b"{"
    outside = tmp_path / "secret.json"
    outside.write_bytes(b"SECRET")
    os.link(listed, tmp_path / "keep")  # the listed inode stays taken: a new file cannot reuse its number
    listed.unlink()
    listed.symlink_to(outside)
    for read in (lambda: fsio.read_head(path, 6), lambda: fsio.read_bytes(path), lambda: fsio.open_binary(path).read(),
                 lambda: fsio.size(path)):
        with pytest.raises(OSError):
            read()
    listed.unlink()
    listed.write_bytes(b"{}")  # another file under the same name: not the one listed
    with pytest.raises(OSError, match="not the file listed"):
        fsio.read_head(path, 2)


def test_links_inside_the_logdir_are_followed_with_the_flag_only(tmp_path):
    """What discovery lists through a symlink that stays inside the logdir (a run folder linked, a file linked) is
    read, through the link, when symlinks are followed (``follow_symlinks``, issue 27 item 9); without it they are
    not listed, and a listed file that became a link inside the logdir is not read either."""
    logdir = tmp_path / "logdir"
    (logdir / "store").mkdir(parents=True)
    (logdir / "store" / NAME).write_bytes(gzip.decompress(TRACE.read_bytes()))
    (logdir / "run_linked").symlink_to(logdir / "store")  # absolute link to a folder inside
    (logdir / "run_file").mkdir()
    (logdir / "run_file" / NAME).symlink_to(Path("..") / "store" / NAME)  # relative link to a file inside
    sessions = discovery.discover(str(logdir), follow_symlinks=True)
    assert {s.run for s in sessions} == {"store", "run_linked", "run_file"}
    for s in sessions:
        with fsio.open_binary(s.hosts[0].path) as f:
            assert f.read(1) == b"{"
        assert json.loads(gzip.decompress(TRACE.read_bytes()))["traceEvents"]  # the same trace
    assert {s.run for s in discovery.discover(str(logdir))} == {"store"}
    # listed without following, then swapped for a link inside the logdir: refused (no link is followed)
    (plain,) = discovery.discover(str(logdir))
    os.link(plain.hosts[0].path, tmp_path / "keep")
    os.remove(plain.hosts[0].path)
    (logdir / "store" / "other.json").write_bytes(b"{}")
    os.symlink("other.json", plain.hosts[0].path)
    with pytest.raises(OSError, match="symlinks are not followed"):
        fsio.read_head(plain.hosts[0].path, 1)


def test_a_listed_path_is_a_path_and_keeps_what_it_remembers_through_pickle(tmp_path):
    import pickle

    p = fsio.Listed(str(tmp_path / "a"), str(tmp_path), ("a",), (1, 2), follow=True)
    assert p == str(tmp_path / "a") and os.path.basename(p) == "a" and json.dumps([p]) == json.dumps([str(p)])
    q = pickle.loads(pickle.dumps(p))
    assert type(q) is fsio.Listed and (q.root, q.rel, q.file_id, q.follow) == (str(tmp_path), ("a",), (1, 2), True)
