"""A JAX job's session kept as its trace viewer JSON alone (the layout both TensorFlow's and JAX's profilers print),
with or without JAX's marks, and the command line's JSON report of such a logdir: shared by the tests of a capture
that does not say which writer made it (h37-words63) and of a GPU plane that states nothing of its device
(h37-vendor66)."""

from __future__ import annotations

import gzip
import io
import json
import re
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from synthetic import jaxcapture as jc
from synthetic import tfcapture as tc
from tb_gpu_advisor.cli import main as cli


def json_report(logdir: Path) -> dict:
    """The one session report of ``report LOGDIR --format json --cache-dir off``, run in this process."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        cli.main(["report", str(logdir), "--format", "json", "--cache-dir", "off"])
    (rep,) = json.loads(out.getvalue())["reports"]
    return rep


def viewer_json_run(root: Path, xplane: str | Path, anonymous: bool) -> Path:
    """The session of ``xplane`` kept as its trace viewer JSON alone; ``anonymous``: without JAX's marks."""
    printed = root / "printed.json"
    tc.write_trace_viewer_json(str(xplane), str(printed))
    text = printed.read_text()
    if anonymous:
        text = re.sub(r"\b(?:jit|pjit|pmap)_", "main_", text).replace("PjitFunction(", "Function(")
    session = root / "json_run" / "plugins" / "profile" / jc.SESSION
    session.mkdir(parents=True)
    (session / "jaxhost.trace.json.gz").write_bytes(gzip.compress(text.encode()))
    return root / "json_run"
