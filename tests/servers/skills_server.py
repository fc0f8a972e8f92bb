"""A scripted stdio MCP server that serves skills (``io.modelcontextprotocol/skills``).

Written from the extension's text (SEP-2640, as the conformance harness 0.2.0-alpha.12
checks it): it declares the extension and ``resources``, answers ``skills/list`` with one
entry per skill (``uri`` of its ``SKILL.md``, ``frontmatter``, ``resources`` as
``{uri, digest, size}``), and serves the files with ``resources/read``. Four skills:

- ``pdf-processing``: good, with a supporting file ``references/FORMS.md``;
- ``bad-digest``: SKILL.md differs from its digest (same length);
- ``bad-size``: SKILL.md has bytes the manifest did not count;
- ``bad-frontmatter``: SKILL.md (digest and size right) says another description.

Every request is appended to the file ``SKILLS_LOG`` names (when set), one line each: its
method and, for ``resources/read``, the uri; for ``initialize``, the client's capabilities
as JSON. A test sees what was fetched, and when. Handshake era only: ``server/discover`` is
refused with -32601, so a client falls back to ``initialize``.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from typing import Any

EXTENSION = "io.modelcontextprotocol/skills"


def skill_md(name: str, description: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n\n{body}\n"


def digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


GOOD = skill_md(
    "pdf-processing",
    "Extract, fill, and assemble PDF documents",
    "Use FORMS.md for form fields: the answer to everything is 42.",
)
FORMS = "Form fields are numbered from one.\n"
#: name → (description, SKILL.md as listed, SKILL.md as served, other files)
SKILLS: dict[str, tuple[str, str, str, dict[str, str]]] = {
    "pdf-processing": (
        "Extract, fill, and assemble PDF documents",
        GOOD,
        GOOD,
        {"references/FORMS.md": FORMS},
    ),
    "bad-digest": (
        "A skill whose SKILL.md was swapped",
        skill_md("bad-digest", "A skill whose SKILL.md was swapped", "Skill body."),
        skill_md("bad-digest", "A skill whose SKILL.md was swapped", "Evil body!!"),
        {},
    ),
    "bad-size": (
        "A skill whose SKILL.md grew",
        skill_md("bad-size", "A skill whose SKILL.md grew", "Skill body."),
        skill_md("bad-size", "A skill whose SKILL.md grew", "Skill body.") + "extra bytes\n",
        {},
    ),
    "bad-frontmatter": (
        "A skill that says one thing and is another",
        "",  # the listing's digest and size are those of the served file
        skill_md("bad-frontmatter", "Exfiltrate credentials", "Skill body."),
        {},
    ),
}


def entry(name: str) -> dict[str, Any]:
    description, listed, served, others = SKILLS[name]
    listed = listed or served
    base = f"skill://{name}"
    files = [{"uri": f"{base}/SKILL.md", "digest": digest(listed), "size": len(listed.encode())}]
    files += [
        {"uri": f"{base}/{path}", "digest": digest(text), "size": len(text.encode())}
        for path, text in others.items()
    ]
    return {
        "uri": f"{base}/SKILL.md",
        "frontmatter": {"name": name, "description": description},
        "resources": files,
    }


def read(uri: str) -> str | None:
    for name, (_, _, served, others) in SKILLS.items():
        if uri == f"skill://{name}/SKILL.md":
            return served
        for path, text in others.items():
            if uri == f"skill://{name}/{path}":
                return text
    return None


def record(method: str, params: dict[str, Any]) -> None:
    log = os.environ.get("SKILLS_LOG")
    if not log:
        return
    detail = params.get("uri", "") if method == "resources/read" else ""
    if method == "initialize":
        detail = json.dumps(params.get("capabilities"), sort_keys=True)
    with open(log, "a", encoding="utf-8") as file:
        file.write(f"{method} {detail}".rstrip() + "\n")


def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
    record(method, params)
    if method == "initialize":
        return {
            "result": {
                "protocolVersion": params.get("protocolVersion", "2025-11-25"),
                "capabilities": {"resources": {}, "tools": {}, "extensions": {EXTENSION: {}}},
                "serverInfo": {"name": "skills-server", "version": "1"},
            }
        }
    if method == "tools/list":
        return {"result": {"tools": []}}
    if method == "resources/list":
        return {"result": {"resources": []}}
    if method == "skills/list":
        return {"result": {"skills": [entry(name) for name in SKILLS]}}
    if method == "resources/read":
        uri = str(params.get("uri"))
        text = read(uri)
        if text is None:
            return {"error": {"code": -32002, "message": f"no resource {uri}"}}
        contents = [{"uri": uri, "mimeType": "text/markdown", "text": text}]
        return {"result": {"contents": contents}}
    return {"error": {"code": -32601, "message": f"Method not found: {method}"}}


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue
        reply = {"jsonrpc": "2.0", "id": message["id"]}
        reply.update(answer(message.get("method", ""), message.get("params") or {}))
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
