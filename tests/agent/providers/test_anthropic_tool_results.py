"""MCP results as the model gets them: images as image blocks, long text shortened.

The agent loop runs real MCP servers' tools and the Anthropic provider sends the
conversation to a scripted Messages API; the tests read what reached the API.
"""

from __future__ import annotations

import base64
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import EVERYTHING_SERVER, node_available
from scripted.model_api import ScriptedModelApi, anthropic_text, anthropic_tool_use, tool_results

from cat_code.agent.loop import Agent
from cat_code.agent.permissions import Permissions
from cat_code.agent.providers import anthropic as anthropic_provider, openai as openai_provider
from cat_code.agent.providers.anthropic import AnthropicProvider
from cat_code.agent.providers.base import UserMessage
from cat_code.host.config.load import McpConfig, StdioServerConfig
from cat_code.host.mcp_tools.output_policy import output_dir
from cat_code.host.servers.pool import McpPool
from cat_code.tools.base import Media, ToolResult
from cat_code.tools.registry import ToolRegistry

OUTPUT_SERVER = Path(__file__).resolve().parents[2] / "servers" / "output_server.py"
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 8).decode()


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedModelApi]:
    with ScriptedModelApi() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        yield server
    assert server.errors == []


def entry(name: str, command: str, *args: str) -> StdioServerConfig:
    return StdioServerConfig(
        name=name, source=Path("test.json"), command=command, args=args,
        startup_timeout_s=30, request_timeout_s=20,
    )  # fmt: skip


async def run_tool_turn(
    api: ScriptedModelApi, server: StdioServerConfig, tool: str, arguments: dict[str, Any]
) -> dict[str, Any]:
    """One model turn calling ``tool``, then a final answer; the tool_result block sent."""
    api.add(anthropic_tool_use(tool, arguments, call_id="toolu_1"), anthropic_text("done"))
    registry = ToolRegistry()
    provider = AnthropicProvider("claude-test")
    try:
        async with McpPool(McpConfig(servers=[server])) as pool:
            await pool.connect_all()
            pool.register_into(registry)
            agent = Agent(provider, registry, permissions=Permissions(allow_patterns=[tool]))
            outcome = await agent.run("go")
    finally:
        await provider.close()
    assert outcome.text == "done"
    [result] = tool_results(api.requests[1])
    return result


@pytest.mark.skipif(not node_available(), reason="server-everything is missing (npm ci)")
async def test_an_image_from_server_everything_reaches_the_api_as_an_image_block(
    api: ScriptedModelApi,
) -> None:
    everything = entry("every", "node", str(EVERYTHING_SERVER), "stdio")

    result = await run_tool_turn(api, everything, "mcp__every__get-tiny-image", {})

    assert result["tool_use_id"] == "toolu_1" and result["is_error"] is False
    text, image = result["content"]
    assert text["type"] == "text"
    assert text["text"].startswith("Here's the image you requested:\n[image: image/png, ")
    assert image["type"] == "image"
    assert image["source"]["type"] == "base64" and image["source"]["media_type"] == "image/png"
    assert base64.b64decode(image["source"]["data"]).startswith(b"\x89PNG")


async def test_a_2_mb_result_reaches_the_api_short_with_the_path_of_the_whole(
    api: ScriptedModelApi, cat_code_home: Path
) -> None:
    server = entry("out", sys.executable, str(OUTPUT_SERVER))

    result = await run_tool_turn(api, server, "mcp__out__text", {"chars": 2_000_000, "width": 80})

    content = result["content"]
    assert isinstance(content, str) and len(content) < 11_000
    match = re.search(r"saved in (\S+)\. ", content)
    assert match and Path(match.group(1)).parent == output_dir(cat_code_home)
    assert len(Path(match.group(1)).read_text()) == 2_000_000


async def test_audio_and_images_of_other_types_stay_placeholders_for_anthropic() -> None:
    audio = Media("audio", "audio/wav", "UklGRg==")
    svg = Media("image", "image/svg+xml", "PHN2Zz4=")
    png = Media("image", "image/png", PNG)
    result = ToolResult("[audio: audio/wav, 4 bytes]\n[image: ...]", media=[audio, svg, png])

    content = anthropic_provider.tool_result_content(result)

    assert content == [
        {"type": "text", "text": result.content},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
    ]
    assert anthropic_provider.tool_result_content(ToolResult("x", media=[audio])) == "x"


def test_openai_tool_messages_carry_the_placeholder_text_only() -> None:
    result = ToolResult("[image: image/png, 16 bytes]", tool_call_id="c1", media=[
        Media("image", "image/png", PNG)])  # fmt: skip
    [message] = openai_provider.to_wire("", [UserMessage(tool_results=[result])])
    assert message == {"role": "tool", "tool_call_id": "c1", "content": result.content}
