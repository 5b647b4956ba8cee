"""A forward pass's upload gets the upload's fix, not the read-back's (issue #37 class 3, h37-probe42s).

Wrong assumption on main ed6824fb: *in a forward-only job every copy is a read of its outputs*.  PyTorch's fixes for
inference rewrote ``excessive_memcpy`` whole (``excessive_memcpy@inference``: "keep .item() ... out of the forward
pass", then ``non_blocking``), which dropped every direction's own fix: an upload of the input -- pinned, asynchronous
and still exposed, because it runs on the kernels' stream -- was told to move its ``.item()`` (the sync's fix, said
already by ``host_sync``), and with ``non_blocking`` in use that was its only fix.  The forward loop's read-back fix
stays where it belongs (the looped ``excessive_memcpy`` / ``:host_device`` of ``Loop.no_sync``); an upload's is now
``excessive_memcpy:h2d@inference``: ``non_blocking`` where not in use, then the next input copied on a stream of its own.

By construction (``synthetic.nsysexport.write_forward_upload_loop``): 167 us steps, a 20 us pinned upload on the
kernels' stream, six 20 us kernels, ``.item()``'s stream sync, no copy to the host.
"""

from __future__ import annotations

from synthetic import nsysexport as nx
from tb_gpu_advisor.frameworks import pytorch
from tests.support.generated_host import nsys_host


def _copies(tmp_path, **kw) -> dict:  # noqa: ANN001 - pytest's
    host = nsys_host(tmp_path, nx.write_forward_upload_loop, "fwd.sqlite", **kw)
    assert host["job"]["kind"] == "inference", host["job"]
    (f,) = [f for f in host["findings"] if f["rule"] == "excessive_memcpy"]
    return f


def test_a_forward_pass_upload_is_not_told_to_move_its_item(tmp_path) -> None:  # noqa: ANN001
    """Fails on main: the copies' one fix was NO_SYNC_INFERENCE, for an upload with no copy to the host beside it."""
    f = _copies(tmp_path)
    assert "mostly H2D" in f["summary"] and "D2H" not in f["summary"], f["summary"]
    texts = [a["text"] for a in f["actions"]]
    assert pytorch.NO_SYNC_INFERENCE.text not in texts, texts
    assert texts[0] == pytorch.PREFETCH_INPUT.text, texts

