"""The real ``tb-gpu-advisor mcp`` server process, driven by the SDK's own client from synchronous tests.

The server is spawned as ``python -m tb_gpu_advisor.cli mcp LOGDIR`` (this checkout's package: the working folder
is the repository) and reached through ``mcp.client.stdio.stdio_client`` + ``ClientSession``, exactly as an MCP
client does.  An anyio blocking portal runs the client's event loop in a thread, so one server can serve every
test of a module (starting one costs about a second) while the tests stay plain functions.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from tests.support.paths import REPO


class McpClient:
    """Calls into one running server; every call blocks until its answer."""

    def __init__(self, portal: Any, session: Any, log: Path) -> None:
        self.portal, self.session, self.log = portal, session, log

    def call(self, tool: str, progress: list | None = None, **arguments: Any) -> Any:
        """The CallToolResult of ``tool``; progress notes (progress, total, message) are appended to ``progress``."""
        async def note(value: float, total: float | None, message: str | None) -> None:
            progress.append((value, total, message))

        return self.portal.call(lambda: self.session.call_tool(
            tool, arguments, progress_callback=note if progress is not None else None))

    def text(self, tool: str, **arguments: Any) -> str:
        """The text a successful call returns (a failed call fails the test with its message and the server log)."""
        result = self.call(tool, **arguments)
        text = "".join(c.text for c in result.content if getattr(c, "type", "") == "text")
        assert not result.is_error, f"{tool}({arguments}) failed: {text}\n--- server log ---\n{self.server_log()}"
        return text

    def whole(self, tool: str, **arguments: Any) -> str:
        """The whole answer of ``tool``: every page of a long one (``offset`` from each page's first line), without
        the pages' first lines."""
        import re

        head = re.compile(r"\[characters ([0-9,]+)-([0-9,]+) of ([0-9,]+); (?:the next page: the same call with "
                          r"offset=([0-9]+)|the last page)\]\n")
        parts, offset = [], 0
        while True:
            text = self.text(tool, **arguments, **({"offset": offset} if offset else {}))
            m = head.match(text)
            if m is None:
                assert offset == 0, f"page at offset {offset} without its first line: {text[:200]}"
                return text
            assert int(m.group(1).replace(",", "")) == offset, (m.group(0), offset)
            parts.append(text[m.end():])
            if m.group(4) is None:
                return "".join(parts)
            offset = int(m.group(4))

    def error(self, tool: str, **arguments: Any) -> str:
        """The message of a call that must fail as a tool error (not a crash of the server)."""
        result = self.call(tool, **arguments)
        text = "".join(c.text for c in result.content if getattr(c, "type", "") == "text")
        assert result.is_error, f"{tool}({arguments}) should have failed, returned: {text[:500]}"
        return text

    def tools(self) -> list[Any]:
        return self.portal.call(self.session.list_tools).tools

    def resources(self) -> list[Any]:
        return self.portal.call(self.session.list_resources).resources

    def read(self, uri: str) -> str:
        result = self.portal.call(self.session.read_resource, uri)
        return "".join(c.text for c in result.contents)

    def server_log(self) -> str:
        return self.log.read_text(errors="replace")[-4000:] if self.log.exists() else ""


@contextlib.contextmanager
def mcp_server(logdir: Path | str, workdir: Path, *args: str, env: dict[str, str] | None = None
               ) -> Iterator[McpClient]:
    """A server for ``logdir`` with its own report cache under ``workdir`` (and its stderr in
    ``workdir/server.log``), closed at the end of the block."""
    from anyio.from_thread import start_blocking_portal
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    workdir.mkdir(parents=True, exist_ok=True)
    log = workdir / "server.log"
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "tb_gpu_advisor.cli", "mcp", str(logdir), *args], cwd=str(REPO),
        env={"TB_GPU_ADVISOR_CACHE_DIR": str(workdir / "cache"), **(env or {})})

    @contextlib.asynccontextmanager
    async def connect(errlog: TextIO) -> Any:
        async with stdio_client(params, errlog=errlog) as (read, write), \
                ClientSession(read, write, read_timeout_seconds=120) as session:  # a hung server fails, never hangs
            await session.initialize()
            yield session

    with open(log, "w") as errlog, start_blocking_portal() as portal, \
            portal.wrap_async_context_manager(connect(errlog)) as session:
        yield McpClient(portal, session, log)
