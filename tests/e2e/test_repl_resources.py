"""The REPL on a pty with the `mcp` SDK's resource server and a scripted model API: an
``@server:uri`` mention and a prompt command with arguments reach the model's request."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scripted.model_api import ScriptedModelApi, anthropic_text
from scripted.processes import REPO, alive, pid_recording_config, read_pid
from scripted.terminal import Terminal

CAT_CODE = str(Path(sys.executable).parent / "cat-code")
RESOURCE_SERVER = Path(__file__).resolve().parents[1] / "servers" / "resource_server.py"
_MODEL_VARS = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_PROFILE",
    "ANTHROPIC_CONFIG_DIR", "OPENAI_API_KEY", "OPENAI_BASE_URL", "CAT_CODE_MODEL",
)  # fmt: skip


@pytest.fixture
def api() -> Iterator[ScriptedModelApi]:
    with ScriptedModelApi() as server:
        yield server
    assert server.errors == []


@pytest.fixture
def repl(tmp_path: Path, api: ScriptedModelApi) -> Iterator[tuple[Terminal, int]]:
    config, pidfiles = pid_recording_config(tmp_path, {"notes": RESOURCE_SERVER})
    env = {k: v for k, v in os.environ.items() if k not in _MODEL_VARS}
    env.update(HOME=str(tmp_path), ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url)
    term = Terminal(CAT_CODE, ["--mcp-config", str(config)], env=env, cwd=REPO)
    try:
        term.wait_for("MCP: 1 server(s)", timeout=30)
        yield term, read_pid(pidfiles["notes"])
    finally:
        term.close()


def last_user_text(request: dict[str, Any]) -> str:
    last = request["messages"][-1]
    assert last["role"] == "user"
    content = last["content"]
    if isinstance(content, str):
        return content
    return "\n".join(b["text"] for b in content if b.get("type") == "text")


def test_an_at_mention_attaches_the_resource_to_the_message(
    repl: tuple[Terminal, int], api: ScriptedModelApi
) -> None:
    term, pid = repl
    seen: list[str] = []

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        seen.append(last_user_text(request))
        assert {"list_mcp_resources", "read_mcp_resource"} <= {t["name"] for t in request["tools"]}
        return anthropic_text("It is the notes server's readme.")

    def second(request: dict[str, Any]) -> dict[str, Any]:
        seen.append(last_user_text(request))
        return anthropic_text("Noted the first note.")

    api.add(answer)
    api.add(second)
    # A mention that cannot be read stops the prompt: nothing reaches the model.
    term.type("what is @notes:note://gone")
    term.wait_for("note://gone")
    term.wait_for("the prompt was not sent")
    term.type("summarise @notes:note://readme please")
    term.wait_for("It is the notes server's readme.")
    assert seen == [
        "summarise @notes:note://readme please\n\n"
        '<resource server="notes" uri="note://readme">\n# Read me\nThe notes server.\n'
        "</resource>"
    ]
    # In prose: the bracket is not part of the URI, and an unknown server is plain text.
    term.type("mail @bob:mailto:bob@example.com (see @notes:note://n1).")
    term.wait_for("Noted the first note.")
    assert seen[1] == (
        "mail @bob:mailto:bob@example.com (see @notes:note://n1).\n\n"
        '<resource server="notes" uri="note://n1">\nnote number 1\n</resource>'
    )
    term.type("/exit")
    assert term.wait_for_exit() == 0
    assert not alive(pid)
    assert len(api.requests) == 2


def test_a_prompt_command_with_arguments_sends_the_prompt_to_the_model(
    repl: tuple[Terminal, int], api: ScriptedModelApi
) -> None:
    term, _ = repl
    seen: list[str] = []

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        seen.append(last_user_text(request))
        return anthropic_text("Looks fast enough.")

    api.add(answer)
    term.type("/mcp prompts")
    term.wait_for("/mcp__notes__review path [focus]")
    term.type("/mcp__notes__review")
    term.wait_for("missing required argument: path")
    term.wait_for("usage: /mcp__notes__review path [focus]")
    term.type('/mcp__notes__review "my file.py" focus=speed')
    term.wait_for("/mcp__notes__review: 1 message from 'notes'")
    term.wait_for("Looks fast enough.")
    assert seen == ["Review my file.py, focusing on speed."]
    term.type("/mcp resources")
    term.wait_for("note://readme")
    term.wait_for("colour://{name}")
    term.type("/exit")
    assert term.wait_for_exit() == 0


def test_tab_completes_a_mention_and_a_prompt_argument(
    repl: tuple[Terminal, int], api: ScriptedModelApi
) -> None:
    term, _ = repl
    seen: list[str] = []

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        seen.append(last_user_text(request))
        return anthropic_text(f"answer {len(seen)}")

    api.add(answer, answer)
    term.press("@notes:note://rea")
    term.wait_for("@notes:note://readme")  # the completion menu offers it
    term.press("\t")
    term.type(" hi")
    term.wait_for("answer 1")
    assert seen[0].startswith("@notes:note://readme hi\n\n<resource")
    term.press("/mcp__notes__paint bl")
    term.wait_for("blue")
    term.press("\t")
    term.type("")
    term.wait_for("answer 2")
    # The prompt's three messages, in their roles: the model answers the last.
    assert seen[1] == "The brightest."
    roles = [(m["role"], str(m["content"])) for m in api.requests[1]["messages"][-3:]]
    assert [r for r, _ in roles] == ["user", "assistant", "user"]
    assert "Describe blue." in roles[0][1] and "Which shade?" in roles[1][1]
    term.type("/exit")
    assert term.wait_for_exit() == 0
