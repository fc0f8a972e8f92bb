"""The safe YAML reader: aliases refused before anything is built, errors cut short."""

from __future__ import annotations

import pytest

from cat_code.base.frontmatter import (
    MAX_ERROR_CHARS,
    MAX_YAML_CHARS,
    MAX_YAML_NODES,
    YamlRefused,
    load_yaml,
    parse_frontmatter,
)
from cat_code.mcp.skills import Skill, SkillCheck, SkillRefused, verify_frontmatter

#: 333 bytes that a plain SafeLoader expands to 9**9 strings ("billion laughs").
BILLION_LAUGHS = (
    "---\n"
    "name: bomb\n"
    "description: x\n"
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
    "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
    "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
    "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
    "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
    "---\n"
)


def _skill(frontmatter: dict[str, object]) -> Skill:
    uri = "skill://bomb/SKILL.md"
    return Skill(uri, "bomb", "x", frontmatter, None, {"uri": uri})


def test_finding_7_a_billion_laughs_skill_md_is_refused_without_printing_its_expansion() -> None:
    assert len(BILLION_LAUGHS.encode()) <= 340
    skill = _skill({"name": "bomb", "description": "x", "a": ["lol"] * 9})
    with pytest.raises(SkillRefused) as caught:
        verify_frontmatter("srv", skill, BILLION_LAUGHS)
    assert caught.value.check is SkillCheck.FRONTMATTER
    assert "aliases" in caught.value.detail
    assert str(caught.value).count("lol") <= 1  # the expansion is never printed
    assert len(caught.value.detail) <= MAX_ERROR_CHARS + 60


def test_an_alias_anywhere_is_refused_and_plain_yaml_still_reads() -> None:
    with pytest.raises(YamlRefused, match="aliases"):
        load_yaml("a: &x 1\nb: *x\n")
    with pytest.raises(YamlRefused, match="aliases"):
        load_yaml("base: &b {k: 1}\nother:\n  <<: *b\n")
    assert load_yaml("a: 1\nb: [x, y]\n") == {"a": 1, "b": ["x", "y"]}


def test_a_yaml_error_quoting_a_long_line_is_cut_to_the_cap() -> None:
    with pytest.raises(YamlRefused) as caught:
        load_yaml("key: [" + "x" * 5000 + "\n")
    assert len(str(caught.value)) <= MAX_ERROR_CHARS


def test_yaml_over_the_size_cap_or_nested_past_the_parser_is_refused() -> None:
    with pytest.raises(YamlRefused, match="over"):
        load_yaml("a: " + "x" * 70_000)
    with pytest.raises(ValueError, match="refused"):
        parse_frontmatter("---\nk: " + "[" * 20_000 + "\n---\n")


def test_finding_7_a_yaml_text_of_more_values_than_the_node_cap_is_refused() -> None:
    many = "k: [" + "0," * (MAX_YAML_NODES + 10) + "0]"
    assert len(many) < MAX_YAML_CHARS  # refused for its values, not its size
    with pytest.raises(YamlRefused, match="values"):
        load_yaml(many)
    keys = "\n".join(f"k{i}: {i}" for i in range(MAX_YAML_NODES // 3))
    assert len(load_yaml(keys)) == MAX_YAML_NODES // 3  # many distinct keys: read


def test_finding_7_the_linear_duplicate_key_check_still_names_every_repeated_key() -> None:
    text = "a: 1\nb: 2\na: 3\nc: 4\nb: 5\n1: x\n1.0: y\n"
    with pytest.raises(YamlRefused) as refused:
        load_yaml(text)
    assert "'a'" in str(refused.value) and "'b'" in str(refused.value)
    with pytest.raises(YamlRefused, match="unhashable"):
        load_yaml("? [1, 2]\n: x\n")
