"""Roots: the folders offered to servers — checked, answered in both eras, and changes
told (handshake) or simply answered anew (2026-07-28); then against the real
``@modelcontextprotocol/server-filesystem`` (started with no directory: only our roots)
and server-everything's own ``roots/list`` request."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import EVERYTHING_SERVER, NODE_MODULES, node_available
from scripted.fakes import FakeTransport, tool

from cat_code.host.config.load import load_config
from cat_code.host.servers.pool import McpPool
from cat_code.mcp.client import ROOTS_GRACE_S, McpClient
from cat_code.mcp.roots import RootError, Roots, check_dir
from cat_code.mcp.transports.base import NO_CONTEXT, RequestContext
from cat_code.mcp.transports.stdio import StdioTransport

HANDSHAKE = "2025-11-25"
MODERN = "2026-07-28"
FILESYSTEM_SERVER = NODE_MODULES / "@modelcontextprotocol/server-filesystem/dist/index.js"
NODE = shutil.which("node") or "node"


def uris(result: dict[str, Any]) -> list[str]:
    return [root["uri"] for root in result["roots"]]


# -- Roots itself ------------------------------------------------------------------------


def test_the_working_directory_comes_first_and_each_folder_is_listed_once(
    tmp_path: Path,
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    roots = Roots([other, other / ".."], cwd=tmp_path)
    assert roots.paths == [tmp_path.resolve(), other.resolve()]
    assert uris(roots.result()) == [tmp_path.resolve().as_uri(), other.resolve().as_uri()]
    assert roots.result()["roots"][1]["name"] == "other"


def test_add_tells_every_subscriber_once_per_real_change(tmp_path: Path) -> None:
    roots = Roots(cwd=tmp_path)
    heard: list[str] = []
    unsubscribe = roots.subscribe(lambda: heard.append("a"))
    roots.subscribe(lambda: heard.append("b"))
    (tmp_path / "x").mkdir()
    assert roots.add(tmp_path / "x") is True
    assert roots.add(tmp_path / "x") is False  # already there: nobody is told
    unsubscribe()
    (tmp_path / "y").mkdir()
    roots.add(tmp_path / "y")
    assert heard == ["a", "b", "b"]


def test_a_missing_folder_or_a_file_is_refused_with_its_name(tmp_path: Path) -> None:
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(RootError, match="nowhere: no such directory"):
        check_dir("nowhere", base=tmp_path)
    with pytest.raises(RootError, match=r"file\.txt: not a directory"):
        check_dir("file.txt", base=tmp_path)
    with pytest.raises(RootError, match="no directory given"):
        check_dir("  ")
    assert check_dir(".", base=tmp_path) == tmp_path.resolve()


# -- the client, on the fake transport -----------------------------------------------------


async def test_a_client_with_roots_declares_them_and_answers_the_servers_request(
    tmp_path: Path,
) -> None:
    roots = Roots(cwd=tmp_path)
    fake = FakeTransport()
    client = McpClient(fake, name="fake", protocol_version=HANDSHAKE, roots=roots)
    await client.connect(timeout=5)
    try:
        capabilities = fake.requests[0]["params"]["capabilities"]
        assert capabilities == {"roots": {"listChanged": True}}
        fake.push({"id": 7, "method": "roots/list"})
        reply = await fake.wait_sent(lambda m: m.get("id") == 7)
        assert uris(reply["result"]) == [tmp_path.resolve().as_uri()]
    finally:
        await client.close()


async def test_a_handshake_client_sends_list_changed_when_a_root_is_added(
    tmp_path: Path,
) -> None:
    roots = Roots(cwd=tmp_path)
    fake = FakeTransport()
    client = McpClient(fake, name="fake", protocol_version=HANDSHAKE, roots=roots)
    await client.connect(timeout=5)
    (tmp_path / "more").mkdir()
    roots.add(tmp_path / "more")
    await fake.wait_sent(lambda m: m.get("method") == "notifications/roots/list_changed")
    fake.push({"id": 8, "method": "roots/list"})
    reply = await fake.wait_sent(lambda m: m.get("id") == 8)
    assert uris(reply["result"])[1] == (tmp_path / "more").resolve().as_uri()
    await client.close()
    roots.add(tmp_path)  # a closed client is no longer subscribed
    assert sum(m.get("method") == "notifications/roots/list_changed" for m in fake.sent) == 1


async def test_a_modern_client_sends_no_notification_and_answers_input_requests_anew(
    tmp_path: Path,
) -> None:
    """2026-07-28 has no roots/list_changed: a server asks inside the request that needs
    the roots (an input request), and gets the list of that moment."""
    calls = 0

    def call(params: dict[str, Any]) -> dict[str, Any]:
        nonlocal calls
        if "inputResponses" not in params:
            calls += 1
            return {
                "resultType": "input_required",
                "inputRequests": {"r": {"method": "roots/list"}},
            }
        text = json.dumps(uris(params["inputResponses"]["r"]))
        return {"content": [{"type": "text", "text": text}]}

    discover = {"supportedVersions": [MODERN], "capabilities": {}, "serverInfo": {}}
    fake = FakeTransport({"server/discover": lambda p: discover, "tools/call": call})
    roots = Roots(cwd=tmp_path)
    client = McpClient(fake, name="fake", roots=roots)
    await client.connect(timeout=5)
    try:
        assert client.era == "modern"
        meta = fake.requests[0]["params"]["_meta"]
        # Declared, but without listChanged: this era has no notification to promise.
        assert meta["io.modelcontextprotocol/clientCapabilities"]["roots"] == {}
        first = await client.call_tool("t")
        (tmp_path / "more").mkdir()
        roots.add(tmp_path / "more")
        second = await client.call_tool("t")
        assert len(json.loads(first["content"][0]["text"])) == 1
        assert len(json.loads(second["content"][0]["text"])) == 2
        assert not any("roots" in str(m.get("method")) for m in fake.sent)
    finally:
        await client.close()


class AppliesRootsLater(FakeTransport):
    """A server like server-filesystem: it asks for the roots after ``initialized`` and
    takes our answer in the background, a moment after it arrives (`APPLY_S`, well within
    the client's grace); a tool call before then is refused."""

    APPLY_S = ROOTS_GRACE_S / 3

    def __init__(self) -> None:
        super().__init__({"tools/call": self._call}, tools=[tool("read")])
        self.applied = False

    async def send(self, message: dict[str, Any], context: RequestContext = NO_CONTEXT) -> None:
        await super().send(message, context)
        if message.get("id") == "roots-1" and "result" in message:
            asyncio.get_running_loop().call_later(self.APPLY_S, setattr, self, "applied", True)

    def _call(self, params: dict[str, Any]) -> dict[str, Any]:
        text = "read" if self.applied else "Access denied - path outside allowed directories"
        return {"content": [{"type": "text", "text": text}]}


async def test_a_tool_call_right_after_the_roots_were_answered_gives_the_server_a_grace(
    tmp_path: Path,
) -> None:
    """Review 12 finding 3: the server applies our roots/list answer asynchronously; a
    tools/call sent at once raced it and was refused."""
    fake = AppliesRootsLater()
    client = McpClient(fake, name="fake", protocol_version=HANDSHAKE, roots=Roots(cwd=tmp_path))
    await client.connect(timeout=5)
    try:
        await client.list_tools()
        fake.push({"id": "roots-1", "method": "roots/list"})
        result = await client.call_tool("read")
        assert result["content"][0]["text"] == "read"
        assert fake.applied
    finally:
        await client.close()


# -- real servers ----------------------------------------------------------------------------


def filesystem_pool(roots: Roots, tmp_path: Path) -> McpPool:
    config_file = tmp_path / "mcp.json"
    config_file.write_text(
        json.dumps({"mcpServers": {"fs": {"command": NODE, "args": [str(FILESYSTEM_SERVER)]}}})
    )
    return McpPool(load_config([config_file]), roots=roots)


async def call_text(pool: McpPool, tool: str, arguments: dict[str, Any]) -> str:
    found = pool.find_tool(tool)
    assert found is not None, [t.name for t in pool.tools()]
    result = await found.execute(arguments)
    return result.content


async def wait_allowed(pool: McpPool, folder: Path) -> str:
    """The server takes our roots in the background after it asked for them: ask it which
    folders it allows until ``folder`` is one (bounded)."""
    async with asyncio.timeout(10):
        while True:
            text = await call_text(pool, "mcp__fs__list_allowed_directories", {})
            if str(folder.resolve()) in text:
                return text
            await asyncio.sleep(0.05)  # polling the server's state, not synchronising


@pytest.mark.skipif(
    not (shutil.which("node") and FILESYSTEM_SERVER.exists()),
    reason="server-filesystem is not installed",
)
async def test_server_filesystem_works_in_the_roots_only_and_follows_an_added_folder(
    tmp_path: Path,
) -> None:
    first, second = tmp_path / "project", tmp_path / "other"
    first.mkdir()
    second.mkdir()
    (first / "a.txt").write_text("in the project")
    (second / "b.txt").write_text("added later")
    roots = Roots(cwd=first)
    pool = filesystem_pool(roots, tmp_path)
    async with pool:
        await pool.connect_all()
        [status] = pool.status()
        assert status.state == "CONNECTED", status.error
        await wait_allowed(pool, first)
        text = await call_text(pool, "mcp__fs__read_text_file", {"path": str(first / "a.txt")})
        assert text == "in the project"
        refused = await call_text(pool, "mcp__fs__read_text_file", {"path": str(second / "b.txt")})
        assert "denied" in refused.lower() or "outside" in refused.lower(), refused

        roots.add(second)  # /add-dir: the server is told, asks again, and allows it
        await wait_allowed(pool, second)
        text = await call_text(pool, "mcp__fs__read_text_file", {"path": str(second / "b.txt")})
        assert text == "added later"


class RecordingRoots(Roots):
    """Roots that note each time a server's request is answered from them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.answered = asyncio.Event()

    def result(self) -> dict[str, Any]:
        self.answered.set()
        return super().result()


@pytest.mark.skipif(not node_available(), reason="server-everything is not installed")
async def test_server_everything_asks_for_the_roots_and_gets_every_folder(tmp_path: Path) -> None:
    (tmp_path / "extra").mkdir()
    roots = RecordingRoots([tmp_path / "extra"], cwd=tmp_path)
    transport = StdioTransport(NODE, [str(EVERYTHING_SERVER), "stdio"], name="everything")
    client = McpClient(transport, name="everything", roots=roots)
    try:
        await client.connect(timeout=20)
        assert client.era == "handshake"
        async with asyncio.timeout(10):
            await roots.answered.wait()  # it asks on its own, after initialized
        expected = [tmp_path.resolve().as_uri(), (tmp_path / "extra").resolve().as_uri()]
        assert uris(roots.result()) == expected
    finally:
        await client.close()


def test_add_dir_on_the_command_line_is_checked(tmp_path: Path) -> None:
    import subprocess

    cat_code = str(Path(sys.executable).parent / "cat-code")
    done = subprocess.run(
        [cat_code, "--add-dir", str(tmp_path / "missing"), "mcp", "list"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 2
    assert "argument --add-dir" in done.stderr and "missing: no such directory" in done.stderr


@contextlib.contextmanager
def logs_of(text: str) -> Iterator[asyncio.Event]:
    """An event set when the client logs ``text`` (a server's notifications/message)."""
    seen = asyncio.Event()

    class Watch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if text in record.getMessage():
                seen.set()

    log = logging.getLogger("cat_code.mcp.client")
    handler, level = Watch(), log.level
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    try:
        yield seen
    finally:
        log.removeHandler(handler)
        log.setLevel(level)


class CountingRoots(Roots):
    """Roots that count the server's requests answered from them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.answers = 0
        self._changed = asyncio.Event()

    def result(self) -> dict[str, Any]:
        self.answers += 1
        self._changed.set()
        return super().result()

    async def wait_answers(self, count: int) -> None:
        async with asyncio.timeout(10):
            while self.answers < count:
                self._changed.clear()
                await self._changed.wait()


@pytest.mark.skipif(not node_available(), reason="server-everything is not installed")
async def test_server_everything_over_http_asks_again_after_list_changed(tmp_path: Path) -> None:
    """Over Streamable HTTP its requests come on the GET stream, our answers as POSTs."""
    from scripted.http_peers import (
        everything_command,
        free_port,
        start_processes,
        stop,
        wait_for_port,
    )

    from cat_code.mcp.transports.http import StreamableHttpTransport

    (tmp_path / "later").mkdir()
    roots = CountingRoots(cwd=tmp_path)
    port = free_port()
    processes = start_processes({"e": (everything_command("streamableHttp"), {"PORT": str(port)})})
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        wait_for_port(port, processes["e"])
        client = McpClient(StreamableHttpTransport(url, name="e"), name="e", roots=roots)
        try:
            await client.connect(timeout=20)
            assert client.era == "handshake"
            await roots.wait_answers(1)
            with logs_of("e [everything-server]: Roots updated: 2 root(s)") as stored:
                roots.add(tmp_path / "later")
                await roots.wait_answers(2)  # told of the change, it asked again
                async with asyncio.timeout(10):
                    await stored.wait()  # and says so (a log message) once it keeps them
            result = await client.call_tool("get-roots-list", {})
            text = result["content"][0]["text"]
            assert (tmp_path / "later").resolve().as_uri() in text, text
        finally:
            await client.close()
    finally:
        stop(processes["e"])
