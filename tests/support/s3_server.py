"""A real S3-compatible server (moto) on a free loopback port, for the tests of s3:// logdirs and caches."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest


def moto_endpoint() -> Iterator[str]:
    """Start moto's threaded server on 127.0.0.1; yield its URL; stop it.  Skips without ``moto[server]``."""
    moto_server = pytest.importorskip("moto.server", reason="moto with its server extra: pip install 'moto[server]'")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()
