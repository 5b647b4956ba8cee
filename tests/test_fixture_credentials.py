"""No kept capture carries someone's credential.

Real traces are kept as written, and a profiler writes what the job's process held: TraceLens' Hugging Face traces
carry the profiling container's whole environment in their ``metadata`` (``HF_TOKEN`` among it), an Nsight export its
processes' environments.  Each such value is redacted before the file is kept (PROVENANCE.md says so); this check keeps
a new one from coming in unread.  Every file under tests/fixtures and demo_logs is read (a gzip member decompressed)
and searched for the forms access tokens take.
"""

from __future__ import annotations

import gzip
import re
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = (ROOT / "tests" / "fixtures", ROOT / "demo_logs")

# The published forms of access tokens (prefix, then the secret): Hugging Face, GitHub (classic, fine-grained, app and
# OAuth), AWS access key ids, OpenAI and Anthropic API keys, Slack tokens.  Each opens with its literal prefix, which
# the regular expression engine searches for fast (a leading \b would defeat that: the boundary is checked after).
FORMS = tuple(re.compile(p) for p in (
    rb"hf_[A-Za-z0-9]{30,}",
    rb"gh[pousr]_[A-Za-z0-9]{36,}", rb"github_pat_[A-Za-z0-9_]{40,}",
    rb"AKIA[0-9A-Z]{16}(?![0-9A-Z])",
    rb"sk-(?:ant-|proj-)?[A-Za-z0-9_-]{32,}",
    rb"xox[abposr]-[A-Za-z0-9-]{10,}"))
_WORD = re.compile(rb"[A-Za-z0-9_]")

LIMIT = 256 << 20  # a fixture's decompressed bytes read at most


def _text(path: Path) -> bytes:
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        try:
            with gzip.open(path, "rb") as f:
                return f.read(LIMIT)
        except (OSError, EOFError, zlib.error):  # a deliberately broken gzip fixture: its bytes as they are
            return raw
    return raw


def _found(data: bytes) -> list[str]:
    """Each match's form and first characters only: the report must not print the secret it found."""
    hits = set()
    for form in FORMS:
        for m in form.finditer(data):
            if m.start() and _WORD.match(data, m.start() - 1):
                continue  # inside a longer word (a kernel's or a path's name), not a token's start
            hits.add(m.group()[:6].decode("ascii", "replace") + "...")
    return sorted(hits)


def test_no_fixture_holds_an_access_token():
    bad = []
    for folder in FOLDERS:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            hits = _found(_text(path))
            if hits:
                bad.append(f"{path.relative_to(ROOT)}: {hits}")
    assert not bad, "redact these values (and say so in PROVENANCE.md) before keeping the file:\n" + "\n".join(bad)


def test_the_check_sees_each_form_and_not_its_neighbours(tmp_path):
    """Control: every form is caught -- in a Kineto trace's metadata as TraceLens' files hold it, gzipped --, and the
    words around such names (a ``TOKENIZERS_PARALLELISM`` setting, a redacted value, a kernel name) are not."""
    secret = "Ab3" * 12  # built here, so this file itself holds no token
    forms = ["hf_" + secret, "ghp_" + secret, "github_pat_" + secret + "_" + secret, "AKIA" + "ABCDEFGHIJKLMNOP",
             "sk-" + secret, "sk-proj-" + secret, "xoxb-" + "1234567890-abc"]
    for form in forms:
        doc = (f'{{"metadata": {{"env": {{"HF_TOKEN": "{form}", "TOKENIZERS_PARALLELISM": "false"}}}}, '
               f'"traceEvents": []}}').encode()
        assert _found(doc), form
        kept = tmp_path / "rank0.1.pt.trace.json.gz"
        kept.write_bytes(gzip.compress(doc))
        assert _found(_text(kept)), form
    clean = (b'{"metadata": {"env": {"HF_TOKEN": "<redacted>", "TOKENIZERS_PARALLELISM": "false", '
             b'"HF_HUB_DISABLE_TELEMETRY": "1"}}, "traceEvents": [{"name": "void ask_kernel<64>(float*)"}]}')
    assert _found(clean) == []
