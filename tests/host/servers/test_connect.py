"""`cat_code.host.servers.connect`: the one place an entry becomes transport + auth + client."""

from __future__ import annotations

from pathlib import Path

from cat_code.host.config.load import HttpServerConfig, parse_entry
from cat_code.host.servers.connect import Connector, build_client, default_auth, oauth_for
from cat_code.mcp.auth.store import MemoryTokenStore
from cat_code.mcp.roots import Roots

SOURCE = Path("/config/mcp.json")


def _entry(entry: dict[str, object]) -> HttpServerConfig:
    parsed = parse_entry("remote", entry, source=SOURCE)
    assert isinstance(parsed, HttpServerConfig)
    return parsed


async def test_a_client_takes_the_entrys_name_timeout_and_a_legacy_fallback_for_a_bare_url(
    tmp_path: Path,
) -> None:
    entry = _entry({"url": "https://example.test/mcp", "requestTimeoutMs": 1500})
    auth = oauth_for(entry, MemoryTokenStore())
    client = build_client(entry, auth=auth)
    try:
        assert client.name == "remote" and client.request_timeout == 1.5
        assert client.transport.kind == "http"
    finally:
        await client.close()
        await auth.aclose()


def test_an_entry_with_its_own_authorization_header_gets_no_sign_in(tmp_path: Path) -> None:
    entry = _entry(
        {"type": "http", "url": "https://example.test/mcp", "headers": {"Authorization": "x"}}
    )
    store = MemoryTokenStore()
    assert default_auth(entry, store) is None
    assert Connector(Roots(), token_store=store).auth_for(entry) is None
