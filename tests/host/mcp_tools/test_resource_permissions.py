"""Deny rules see through the resource tools: a rule denying every tool of a server
refuses reading or listing that server's resources, and a listing of all servers leaves
it out — against two real SDK resource servers over stdio."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from scripted.procs import SERVERS

from cat_code.agent.permissions import Permissions, RuleBook
from cat_code.host.config.load import McpConfig, StdioServerConfig
from cat_code.host.mcp_tools.resource_tools import resource_tools
from cat_code.host.servers.pool import McpPool

RESOURCE_SERVER = SERVERS / "resource_server.py"


def entry(name: str) -> StdioServerConfig:
    return StdioServerConfig(
        name=name, source=Path("test-mcp.json"), command=sys.executable,
        args=(str(RESOURCE_SERVER),), startup_timeout_s=30, request_timeout_s=20,
    )  # fmt: skip


async def test_a_denied_server_is_refused_and_left_out_of_the_listing(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"permissions": {"deny": ["mcp__notes__*"]}}))
    permissions = Permissions(approve_all=True, rules=RuleBook(settings))
    async with McpPool(McpConfig(servers=[entry("notes"), entry("shelf")])) as pool:
        await pool.connect_all()
        assert [s.state for s in pool.status()] == ["CONNECTED", "CONNECTED"]
        listing, read = resource_tools(pool, permissions.denies_server)

        assert (await permissions.authorize(listing, {})).allowed
        listed = json.loads((await listing.execute({})).content)
        assert {entry["server"] for entry in listed} == {"shelf"}
        assert any(entry.get("uri") == "note://readme" for entry in listed)

        for tool, arguments in ((read, {"uri": "note://readme"}), (listing, {})):
            refused = await permissions.authorize(tool, {"server": "notes", **arguments})
            assert not refused.allowed
            assert "denied by the permission rule 'mcp__notes__*'" in refused.reason
            assert (await permissions.authorize(tool, {"server": "shelf", **arguments})).allowed
        shelf = await read.execute({"server": "shelf", "uri": "note://n2"})
        assert (shelf.content, shelf.is_error) == ("note number 2", False)
