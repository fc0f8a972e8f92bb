"""Skills (SEP-2640) through `McpClient` against a real stdio child that serves them
(`servers/skills_server.py`): declared, listed without a read, loaded only verified."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from cat_code.mcp.client import McpClient
from cat_code.mcp.skills import (
    SKILLS_EXTENSION,
    SkillCheck,
    SkillRefused,
    parse_frontmatter,
    same_json,
)
from cat_code.mcp.transports.stdio import StdioTransport

SKILLS_SERVER = Path(__file__).resolve().parents[1] / "servers" / "skills_server.py"


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return tmp_path / "requests.log"


def requests(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def reads(log: Path) -> list[str]:
    return [line.split(" ", 1)[1] for line in requests(log) if line.startswith("resources/read")]


@pytest.fixture
async def client(log: Path) -> AsyncIterator[McpClient]:
    transport = StdioTransport(
        sys.executable, [str(SKILLS_SERVER)], env={"SKILLS_LOG": str(log)}, name="skills"
    )
    client = McpClient(transport, name="skills", skills=True)
    try:
        await client.connect(timeout=10)
        yield client
    finally:
        await client.close()


async def test_the_client_declares_the_extension_and_lists_skills_without_reading_a_file(
    client: McpClient, log: Path
) -> None:
    skills = await client.list_skills()
    assert [s.name for s in skills] == [
        "pdf-processing",
        "bad-digest",
        "bad-size",
        "bad-frontmatter",
    ]
    good = skills[0]
    assert good.description == "Extract, fill, and assemble PDF documents"
    assert [good.relative(f.uri) for f in good.supporting_files()] == ["references/FORMS.md"]
    initialize = next(line for line in requests(log) if line.startswith("initialize"))
    assert json.loads(initialize.split(" ", 1)[1])["extensions"] == {SKILLS_EXTENSION: {}}
    assert "skills/list" in [line.split(" ")[0] for line in requests(log)]
    assert reads(log) == []
    assert client.cached_skills() == skills  # the system prompt's source: no request


async def test_loading_a_skill_reads_its_skill_md_only_and_a_file_only_when_asked(
    client: McpClient, log: Path
) -> None:
    [good, *_] = await client.list_skills()
    loaded = await client.load_skill(good)
    assert "the answer to everything is 42" in loaded.text
    assert reads(log) == ["skill://pdf-processing/SKILL.md"]
    forms = await client.read_skill_file(good, "references/FORMS.md")
    assert (forms.data, forms.verified) == (b"Form fields are numbered from one.\n", True)
    assert reads(log)[-1] == "skill://pdf-processing/references/FORMS.md"


@pytest.mark.parametrize(
    ("name", "check", "detail"),
    [
        ("bad-digest", SkillCheck.DIGEST, "the content hashes to sha256:"),
        ("bad-size", SkillCheck.SIZE, "read 89 bytes, the manifest says 77"),
        ("bad-frontmatter", SkillCheck.FRONTMATTER, "description: the file has 'Exfiltrate"),
    ],
)
async def test_a_skill_that_fails_verification_is_refused_naming_the_skill_and_the_check(
    client: McpClient, log: Path, name: str, check: SkillCheck, detail: str
) -> None:
    skill = next(s for s in await client.list_skills() if s.name == name)
    with pytest.raises(SkillRefused) as refused:
        await client.load_skill(skill)
    assert (refused.value.skill, refused.value.check, refused.value.server) == (
        name,
        check,
        "skills",
    )
    assert f"skill '{name}'" in str(refused.value)
    assert f"{check.value} check failed" in str(refused.value)
    assert detail in refused.value.detail
    assert reads(log) == [f"skill://{name}/SKILL.md"]


async def test_a_file_outside_the_manifest_is_refused_without_a_read(
    client: McpClient, log: Path
) -> None:
    [good, *_] = await client.list_skills()
    with pytest.raises(SkillRefused) as refused:
        await client.read_skill_file(good, "references/SECRET.md")
    assert refused.value.check is SkillCheck.MANIFEST
    with pytest.raises(SkillRefused, match="not inside the skill's directory"):
        await client.read_skill_file(good, "skill://other/SKILL.md")
    assert reads(log) == []


async def test_a_client_that_does_not_declare_skills_lists_none_and_asks_nothing(
    log: Path,
) -> None:
    transport = StdioTransport(
        sys.executable, [str(SKILLS_SERVER)], env={"SKILLS_LOG": str(log)}, name="plain"
    )
    client = McpClient(transport, name="plain")
    try:
        await client.connect(timeout=10)
        assert await client.list_skills() == []
    finally:
        await client.close()
    initialize = next(line for line in requests(log) if line.startswith("initialize"))
    assert "extensions" not in json.loads(initialize.split(" ", 1)[1])
    assert not any(line.startswith("skills/") for line in requests(log))


def test_frontmatter_is_read_as_yaml_1_2_core_schema() -> None:
    text = "---\nname: x\nflag: yes\nwhen: 2024-01-01\nmode: 010\nok: true\n---\nbody\n"
    assert parse_frontmatter("\ufeff" + text) == {
        "name": "x",
        "flag": "yes",
        "when": "2024-01-01",
        "mode": 10,
        "ok": True,
    }


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("no frontmatter\n", "does not begin with"),
        ("---\nname: [\n---\n", "not valid YAML"),
        ("---\n- a list\n---\n", "not a mapping"),
        ("---\nname: a\nname: b\n---\n", "given more than once"),
    ],
)
def test_frontmatter_that_cannot_be_compared_is_an_error(text: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        parse_frontmatter(text)


def test_frontmatter_fields_compare_as_json_values() -> None:
    assert same_json({"a": 1, "b": None}, {"a": 1.0})  # missing is null; 1 is 1.0
    assert not same_json({"a": True}, {"a": 1})
    assert not same_json({"a": ["x"]}, {"a": "x"})
    assert same_json({"m": {"k": [1, "v"]}}, {"m": {"k": [1, "v"]}})
