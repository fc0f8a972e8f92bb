"""Conformance-suite client: cat-code's own MCP client driven by the official harness.

``@modelcontextprotocol/conformance`` starts a mock server per scenario and runs this file
with the server URL as the last argument and the scenario in ``MCP_CONFORMANCE_SCENARIO``.
Each scenario runs the real code paths (`McpClient` over `StreamableHttpTransport`) and the
process exits 0 only if the scenario's actions succeeded. Logs go to stderr. The client
picks the protocol era itself: the 0.2.0-alpha harness's 2026-07-28 scenarios (and its
newer auth scenarios) are spoken to statelessly, through the same `McpClient`.

Every ``auth/*`` scenario runs through `McpAuth` (the OAuth flow the command line uses)
with a `MemoryTokenStore` and a headless `Authorizer` that GETs the authorization URL
without following its redirect and hands the ``Location``'s query back; credentials come
from ``MCP_CONFORMANCE_CONTEXT`` (``auth/wif-jwt-bearer``: the workload's JWT as the
``jwt_bearer`` grant's assertion; ``auth/dpop*`` need nothing: the authorization server's
metadata turns DPoP on). It then lists the tools and calls the first one.
The ``sep-2640-client-*`` scenarios declare the skills extension: one only lists the skills
(no file may be read), the others load the listed skill, which the mock has tampered with,
and succeed when cat-code refuses it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx2

from cat_code.mcp.auth import AuthorizationResponse, OAuthSettings
from cat_code.mcp.auth.provider import McpAuth
from cat_code.mcp.auth.store import MemoryTokenStore
from cat_code.mcp.client import McpClient
from cat_code.mcp.skills import SkillRefused
from cat_code.mcp.transports.http import StreamableHttpTransport

logger = logging.getLogger("conformance")

#: The harness kills a client after 60 s (our --timeout); give up cleanly before that.
OVERALL_TIMEOUT_S = 50.0
REDIRECT_URI = "http://localhost:3000/callback"
#: The conformance suite's Client ID Metadata Document URL (never fetched by its mocks).
CIMD_URL = "https://conformance-test.local/client-metadata.json"


class HeadlessAuthorizer:
    """The person in the browser, played by a GET that does not follow the redirect."""

    def __init__(self) -> None:
        self._http = httpx2.AsyncClient(follow_redirects=False, timeout=10.0)

    async def redirect_uri(self, preferred: str | None = None) -> str:
        return REDIRECT_URI

    async def authorize(self, url: str) -> AuthorizationResponse:
        response = await self._http.get(url)
        location = response.headers.get("location")
        if response.status_code not in (301, 302, 303, 307, 308) or not location:
            raise RuntimeError(f"authorization endpoint answered HTTP {response.status_code}")
        return dict(parse_qsl(urlsplit(location).query, keep_blank_values=True))

    async def aclose(self) -> None:
        await self._http.aclose()


def oauth_settings(context: dict[str, Any]) -> OAuthSettings:
    """The scenario's credentials as an entry's ``oauth`` block would give them."""
    grant: Any = "authorization_code"
    if context.get("idp_id_token"):
        grant = "id_jag"
    elif context.get("valid_jwt"):
        # auth/wif-jwt-bearer: the workload's token, as oauth.assertion would give it.
        grant = "jwt_bearer"
    elif "client-credentials" in str(context.get("name", "")):
        grant = "client_credentials"
    return OAuthSettings(
        client_id=context.get("client_id"),
        client_secret=context.get("client_secret"),
        client_metadata_url=CIMD_URL,
        grant_type=grant,
        private_key_pem=context.get("private_key_pem"),
        signing_algorithm=context.get("signing_algorithm"),
        idp_token_endpoint=context.get("idp_token_endpoint"),
        idp_client_id=context.get("idp_client_id"),
        idp_id_token=context.get("idp_id_token"),
        assertion=context.get("valid_jwt"),
    )


async def call_first_tool(client: McpClient) -> None:
    tools = await client.list_tools()
    if tools:
        result = await client.call_tool(tools[0]["name"], {})
        _expect_success(result)


async def accept_with_defaults(params: dict[str, Any]) -> dict[str, Any]:
    """Accept a form elicitation, filling every field with its schema default."""
    schema = params.get("requestedSchema") or {}
    properties = schema.get("properties") or {}
    content = {
        name: spec["default"]
        for name, spec in properties.items()
        if isinstance(spec, dict) and "default" in spec
    }
    return {"action": "accept", "content": content}


async def initialize(client: McpClient) -> None:
    await client.list_tools()


async def tools_call(client: McpClient) -> None:
    await client.list_tools()
    result = await client.call_tool("add_numbers", {"a": 5, "b": 3})
    _expect_success(result)


async def elicitation_defaults(client: McpClient) -> None:
    await client.list_tools()
    result = await client.call_tool("test_client_elicitation_defaults", {})
    _expect_success(result)


async def sse_retry(client: McpClient) -> None:
    result = await client.call_tool("test_reconnection", {})
    _expect_success(result)


def _expect_success(result: dict[str, Any]) -> None:
    if result.get("isError"):
        raise RuntimeError(f"tool call failed: {result}")
    logger.info("tool result: %s", result.get("content"))


async def call_every_tool(client: McpClient) -> None:
    """List the tools and call each one cat-code kept (``http-invalid-tool-headers``: the
    invalid ones must not even be offered)."""
    for tool in await client.list_tools():
        await client.call_tool(tool["name"], {"region": "us-west1"})


async def call_listed_tools_once(client: McpClient) -> None:
    """List the tools and call the first (the standard headers of both methods)."""
    await call_first_tool(client)


async def context_tool_calls(client: McpClient) -> None:
    """The calls the scenario hands over in ``MCP_CONFORMANCE_CONTEXT``, with its arguments."""
    await client.list_tools()
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    for call in context.get("toolCalls") or []:
        _expect_success(await client.call_tool(call["name"], call.get("arguments") or {}))


async def echo_schema(client: McpClient) -> None:
    """Hand the focal tool's inputSchema back through the echo tool, as we hold it."""
    tools = {t["name"]: t for t in await client.list_tools()}
    schema = tools["json_schema_2020_12_tool"]["inputSchema"]
    _expect_success(await client.call_tool("json_schema_echo", {"schema": schema}))


async def request_state(client: McpClient) -> None:
    await client.list_tools()
    for name in (
        "test_mrtr_echo_state",
        "test_mrtr_no_state",
        "test_mrtr_unrelated",
        "test_mrtr_no_result_type",
    ):
        _expect_success(await client.call_tool(name, {}))


async def list_skills(client: McpClient) -> None:
    """``sep-2640-client-no-prefetch``: list the skills as a host does, load none."""
    for skill in await client.list_skills():
        logger.info("skill %s: %s (%s)", skill.name, skill.description, skill.uri)


async def load_first_skill(client: McpClient) -> None:
    """``sep-2640-client-verify-*``: load the listed skill as the model would, then read
    its other files; the tampered SKILL.md must be refused before any of those is read."""
    skills = await client.list_skills()
    if not skills:
        raise RuntimeError("the server listed no skill")
    try:
        loaded = await client.load_skill(skills[0])
    except SkillRefused as exc:
        logger.info("refused, as it must be: %s (check %s)", exc, exc.check.value)
        return
    for file in loaded.skill.supporting_files():
        await client.read_skill_file(loaded.skill, file.uri)
    raise RuntimeError(f"skill {loaded.skill.name} passed verification; it was tampered with")


SCENARIOS: dict[str, Callable[[McpClient], Awaitable[None]]] = {
    "initialize": initialize,
    "tools_call": tools_call,
    "elicitation-sep1034-client-defaults": elicitation_defaults,
    "sse-retry": sse_retry,
    # 2026-07-28 (0.2.0-alpha)
    "request-metadata": initialize,
    "http-standard-headers": call_listed_tools_once,
    "http-custom-headers": context_tool_calls,
    "http-invalid-tool-headers": call_every_tool,
    "json-schema-ref-no-deref": initialize,
    "json-schema-2020-12-preservation": echo_schema,
    "sep-2322-client-request-state": request_state,
    # the skills extension (SEP-2640)
    "sep-2640-client-no-prefetch": list_skills,
    "sep-2640-client-verify-digest": load_first_skill,
    "sep-2640-client-verify-size": load_first_skill,
    "sep-2640-client-verify-frontmatter": load_first_skill,
}
#: Scenarios whose server asks for input: the form is accepted with its defaults.
ELICITING = {"elicitation-sep1034-client-defaults", "sep-2322-client-request-state"}


async def run(scenario: str, url: str) -> None:
    auth: McpAuth | None = None
    authorizer: HeadlessAuthorizer | None = None
    if scenario.startswith("auth/"):
        action: Callable[[McpClient], Awaitable[None]] = call_first_tool
        context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
        authorizer = HeadlessAuthorizer()
        auth = McpAuth(
            url, settings=oauth_settings(context), store=MemoryTokenStore(), authorizer=authorizer
        )
    else:
        action = SCENARIOS[scenario]
    client = McpClient(
        StreamableHttpTransport(url, name=scenario, auth=auth),
        name=scenario,
        elicitation_handler=accept_with_defaults if scenario in ELICITING else None,
        skills=scenario.startswith("sep-2640-"),
    )
    try:
        async with asyncio.timeout(OVERALL_TIMEOUT_S):
            await client.connect()
            logger.info("connected: protocol %s (%s)", client.protocol_version, client.era)
            await action(client)
    finally:
        await client.close()
        if auth is not None:
            await auth.aclose()
        if authorizer is not None:
            await authorizer.aclose()


def main(argv: list[str]) -> int:
    logging.basicConfig(
        level=logging.DEBUG if os.environ.get("CAT_CODE_CONFORMANCE_DEBUG") else logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    if len(argv) < 2 or (scenario not in SCENARIOS and not scenario.startswith("auth/")):
        sys.stderr.write(
            f"usage: MCP_CONFORMANCE_SCENARIO=<{'|'.join(SCENARIOS)}> client.py URL "
            f"(got scenario {scenario!r})\n"
        )
        return 2
    try:
        asyncio.run(run(scenario, argv[-1]))
    except Exception:
        logger.exception("scenario %s failed", scenario)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
