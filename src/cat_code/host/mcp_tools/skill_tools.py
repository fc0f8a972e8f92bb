"""``load_mcp_skill``: the model loads a server's skill (SEP-2640) when a task calls for it.

The system prompt names every listed skill with its description (`skill_summaries`); this
tool is how the model reads one: ``{server, name}`` reads and verifies its ``SKILL.md``
(size, digest, frontmatter: `cat_code.mcp.skills`) and returns it with the list of the
skill's other files; ``{server, name, file}`` reads one of those, verified the same way.
Nothing is read before the model asks. A skill that fails verification is refused: the
result is an error naming the skill and the check, and none of its content. The tool is
registered only when a connected server listed a skill; like every tool it never raises.
Permission rules see through it as through the resource tools (``mcp__<server>__*``).
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import TYPE_CHECKING, Any

from cat_code.host.mcp_tools.resource_excerpt import MAX_RESOURCE_CHARS
from cat_code.host.mcp_tools.resource_tools import _server_subjects
from cat_code.host.status import one_line
from cat_code.mcp.errors import McpClientError, describe_error
from cat_code.mcp.skills import Skill
from cat_code.mcp.transports.base import size_text
from cat_code.tools.base import ProgressCallback, Tool, ToolResult

if TYPE_CHECKING:
    from cat_code.host.servers.pool import McpPool

logger = logging.getLogger(__name__)

LOAD_NAME = "load_mcp_skill"
#: A skill's description in the system prompt is cut after this many characters.
MAX_SKILL_DESCRIPTION_CHARS = 300
#: At most this many skills are named in the system prompt (the rest are counted).
MAX_SKILLS_LISTED = 100


class LoadMcpSkillTool(Tool):
    """``load_mcp_skill``: one skill's verified ``SKILL.md``, or one of its files."""

    name = LOAD_NAME
    description = (
        "Load a skill offered by an MCP server (the system prompt lists them under 'Skills "
        "from MCP servers') when the task matches its description: returns its SKILL.md "
        "instructions and the list of its other files. Read one of those with the same tool "
        "and 'file' set to its path. A skill whose content fails verification is refused."
    )
    input_schema: dict[str, Any] = {  # noqa: RUF012 - class-level schema is read-only by convention
        "type": "object",
        "properties": {
            "server": {"type": "string", "description": "The MCP server's name"},
            "name": {"type": "string", "description": "The skill's name (or its uri)"},
            "file": {
                "type": "string",
                "description": "A file of the skill, by its path inside it "
                "(e.g. references/FORMS.md); omit it to load SKILL.md",
            },
        },
        "required": ["server", "name"],
    }
    read_only = True

    def __init__(self, pool: McpPool) -> None:
        self.pool = pool

    def permission_subjects(self, arguments: dict[str, Any]) -> list[str]:
        return _server_subjects(arguments)

    async def execute(
        self, arguments: dict[str, Any], *, progress: ProgressCallback | None = None
    ) -> ToolResult:
        server, name, file = (arguments.get(k) for k in ("server", "name", "file"))
        if not isinstance(server, str) or not server:
            return ToolResult.error("Error: 'server' must be a non-empty string")
        if not isinstance(name, str) or not name:
            return ToolResult.error("Error: 'name' must be a non-empty string")
        if file is not None and (not isinstance(file, str) or not file):
            return ToolResult.error("Error: 'file' must be a non-empty string when given")
        try:
            if file is None or file == "SKILL.md":
                loaded = await self.pool.load_skill(server, name)
                return ToolResult(content=_cut(skill_text(server, loaded.skill, loaded.text)))
            read = await self.pool.read_skill_file(server, name, file)
        except McpClientError as exc:
            return ToolResult.error(f"Error: {describe_error(exc)}")
        try:
            text = read.data.decode("utf-8")
        except UnicodeDecodeError:
            mime = read.mime_type or "unknown type"
            return ToolResult(
                content=f"[binary file {read.uri}: {mime}, {size_text(len(read.data))}]"
            )
        note = "" if read.verified else " (not verified: the server publishes no manifest)"
        return ToolResult(content=_cut(f"{read.uri}{note}:\n{text}"))


def skill_text(server: str, skill: Skill, text: str) -> str:
    """A loaded skill as the model reads it: where it is from, SKILL.md, its other files."""
    verified = "verified" if skill.files is not None else "no manifest to verify against"
    lines = [f"Skill '{skill.name}' from MCP server '{server}' ({skill.uri}, {verified}):", text]
    files = skill.supporting_files()
    if files:
        lines.append(
            f"Other files of this skill (read one with {LOAD_NAME} and file=PATH, when needed):"
        )
        lines += [f"- {skill.relative(f.uri)} ({_size(f.size)})" for f in files]
    elif skill.files is None:
        lines.append(
            f"The server lists no files for this skill; ask {LOAD_NAME} for one by its path "
            "inside the skill if SKILL.md names it."
        )
    return "\n".join(lines)


def _size(size: Any) -> str:
    return size_text(int(size)) if isinstance(size, int) and not isinstance(size, bool) else "?"


def _cut(text: str) -> str:
    if len(text) <= MAX_RESOURCE_CHARS:
        return text
    left = len(text) - MAX_RESOURCE_CHARS
    return f"{text[:MAX_RESOURCE_CHARS]}\n… [{left} more characters not shown]"


def skill_summaries(skills: list[tuple[str, Skill]]) -> str:
    """The system prompt's list of skills: one line each, server, name and description."""
    if not skills:
        return ""
    lines = [
        "Skills from MCP servers (load one with load_mcp_skill {server, name} when a task "
        "matches its description; its files are read only then):"
    ]
    names = Counter((server, skill.name) for server, skill in skills)
    for server, skill in skills[:MAX_SKILLS_LISTED]:
        about = one_line(skill.description, MAX_SKILL_DESCRIPTION_CHARS)
        # Names may repeat within a server: then the uri is the name to load it by.
        name = skill.uri if names[server, skill.name] > 1 else " ".join(skill.name.split())
        lines.append(f"- server '{server}', skill '{name}': {about}")
    if len(skills) > MAX_SKILLS_LISTED:
        lines.append(f"- … and {len(skills) - MAX_SKILLS_LISTED} more (not listed here)")
    return "\n".join(lines)


def skill_tools(pool: McpPool) -> list[Tool]:
    """``load_mcp_skill`` when a connected server listed a skill, else nothing."""
    return [LoadMcpSkillTool(pool)] if pool.known_skills() else []


__all__ = [
    "LOAD_NAME",
    "LoadMcpSkillTool",
    "skill_summaries",
    "skill_text",
    "skill_tools",
]
