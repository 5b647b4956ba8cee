"""Edits of a kept TensorFlow trace viewer capture (``*.trace.json.gz``): how the window-reader tests plant the op a
graph's run would have recorded, in a copy beside the test's own folder (a kept capture is never written)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path


def with_graph_op(src: Path, out_dir: Path, after_us: int, op: dict) -> Path:
    """A copy of ``src`` in ``out_dir`` (made) with one op event ``op`` (name, args: the fields the test sets) on the
    ``tf_Compute`` thread, ``after_us`` into the first ``EagerLocalExecute: __inference_*`` graph run, lasting 5 ms:
    an op a compiled graph's executor ran.  Returns the copy's path."""
    doc = json.loads(gzip.decompress(src.read_bytes()))
    ev = doc["traceEvents"]
    run = next(e for e in ev if e.get("name", "").startswith("EagerLocalExecute: __inference_"))
    compute = next(e["tid"] for e in ev if e.get("name") == "thread_name" and e["args"]["name"] == "tf_Compute")
    ev.append({"ph": "X", "pid": run["pid"], "tid": compute, "ts": run["ts"] + after_us, "dur": 5000, **op})
    out_dir.mkdir(parents=True)
    out = out_dir / src.name
    out.write_bytes(gzip.compress(json.dumps(doc).encode()))
    return out
