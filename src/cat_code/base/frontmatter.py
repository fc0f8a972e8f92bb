"""YAML frontmatter, read safely: the one YAML reader of cat-code (skills; subagent files next).

`load_yaml` reads YAML text that a server or a repository handed us with a `yaml.SafeLoader`
that resolves plain scalars as YAML 1.2's core schema does (``yes``/``no`` and dates stay
strings, ``010`` is ten) and refuses what makes a small text expensive:

- an alias (``*name``) is refused when composed, before anything is built, so a
  "billion laughs" text of a few hundred bytes costs a few hundred bytes of work (no
  anchor-and-alias expansion, no merge keys, which are aliases too);
- text over `MAX_YAML_CHARS`, and nesting deep enough to exhaust the parser's recursion;
- more than `MAX_YAML_NODES` values, so no text costs more than linear work (the
  duplicate-key check is one pass over a set);
- a key given twice (an error, not the last one winning).

Every refusal is a `YamlRefused` (a `ValueError`) whose message quotes at most
`MAX_ERROR_CHARS` characters of the text. `parse_frontmatter` splits the ``---`` block off
a Markdown file (``SKILL.md``) and reads it as a mapping.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any

#: The largest YAML text read: a frontmatter is a few lines; anything near this is not one.
MAX_YAML_CHARS = 64 * 1024
#: The most values (nodes) a YAML text may hold: a frontmatter has tens.
MAX_YAML_NODES = 10_000
#: The most characters of a YAML error message shown (a message may quote the text).
MAX_ERROR_CHARS = 200
#: A frontmatter block: ``---``, the YAML, ``---`` (a BOM before it is allowed).
_FRONTMATTER = re.compile(r"---\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|$)", re.DOTALL)


class YamlRefused(ValueError):
    """YAML text cat-code does not read; ``reason`` is the sentence (already cut short)."""

    def __init__(self, reason: str) -> None:
        reason = " ".join(reason.split())
        if len(reason) > MAX_ERROR_CHARS:
            reason = reason[: MAX_ERROR_CHARS - 1] + "…"
        super().__init__(reason)
        self.reason = reason


def load_yaml(text: str) -> Any:
    """``text`` read as YAML (see the module docstring); `YamlRefused` when it is not YAML
    or is refused (an alias, too long, too deep, a repeated key)."""
    if len(text) > MAX_YAML_CHARS:
        raise YamlRefused(f"the YAML is over {MAX_YAML_CHARS:,} characters")
    import yaml  # loaded by the first reader of YAML only (a skill being loaded)

    try:
        return yaml.load(text, Loader=safe_yaml_loader())  # a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise YamlRefused(f"not valid YAML: {exc}") from None
    except RecursionError:
        raise YamlRefused("the YAML is nested too deeply") from None


def parse_frontmatter(text: str) -> dict[str, Any]:
    """The YAML frontmatter at the start of ``text`` as a mapping; `ValueError` when there
    is none, it is not YAML (or is refused, see `load_yaml`), or not a mapping."""
    match = _FRONTMATTER.match(text.removeprefix("\ufeff"))
    if match is None:
        raise ValueError("SKILL.md does not begin with a --- delimited YAML frontmatter")
    try:
        value = load_yaml(match.group(1))
    except YamlRefused as exc:
        raise ValueError(f"its frontmatter is refused: {exc.reason}") from None
    if not isinstance(value, dict):
        raise ValueError("its frontmatter is not a mapping")
    return value


@functools.cache
def safe_yaml_loader() -> type:
    """The `yaml.SafeLoader` subclass `load_yaml` uses (made once, on first use)."""
    import yaml

    class CoreLoader(yaml.SafeLoader):
        def compose_node(self, parent: Any, index: Any) -> Any:
            # Refused here, before composing: an alias is how a few bytes become gigabytes.
            if self.check_event(yaml.AliasEvent):
                raise yaml.composer.ComposerError(None, None, "aliases (*name) are not allowed")
            self.nodes = getattr(self, "nodes", 0) + 1  # a loader reads one text
            if self.nodes > MAX_YAML_NODES:
                raise yaml.composer.ComposerError(
                    None, None, f"more than {MAX_YAML_NODES:,} values (not a frontmatter)"
                )
            return super().compose_node(parent, index)

    resolvers: dict[Any, list[tuple[str, re.Pattern[str]]]] = {}
    for first, entries in yaml.SafeLoader.yaml_implicit_resolvers.items():
        kept = [
            (tag, pattern)
            for tag, pattern in entries
            if tag.rsplit(":", 1)[-1] not in ("bool", "int", "float", "null", "timestamp")
        ]
        if kept:
            resolvers[first] = kept
    CoreLoader.yaml_implicit_resolvers = resolvers
    core = {
        "tag:yaml.org,2002:null": r"~|null|Null|NULL|",
        "tag:yaml.org,2002:bool": r"true|True|TRUE|false|False|FALSE",
        "tag:yaml.org,2002:int": r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+",
        "tag:yaml.org,2002:float": (
            r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
            r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"
        ),
    }
    for tag, pattern in core.items():
        CoreLoader.add_implicit_resolver(tag, re.compile(f"^(?:{pattern})$"), None)

    def construct_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
        value = str(loader.construct_scalar(node))
        if value.startswith("0o"):
            return int(value[2:], 8)
        if value.startswith("0x"):
            return int(value[2:], 16)
        return int(value, 10)

    def construct_float(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> float:
        value = str(loader.construct_scalar(node)).lower()
        if value.endswith(".nan"):
            return math.nan
        if value.endswith(".inf"):
            return -math.inf if value.startswith("-") else math.inf
        return float(value)

    def construct_bool(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> bool:
        return str(loader.construct_scalar(node)).lower() == "true"

    def construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
        seen: set[Any] = set()
        repeated: set[str] = set()
        for key, _ in node.value:  # one pass (a set), not keys.count per key: linear
            value = loader.construct_object(key, deep=True)
            try:
                if value in seen:
                    repeated.add(repr(value)[:MAX_ERROR_CHARS])
                seen.add(value)
            except TypeError:  # unhashable: construct_mapping names it below
                pass
        if repeated:
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"key {', '.join(sorted(repeated))} given more than once",
                node.start_mark,
            )
        return loader.construct_mapping(node, deep=True)

    CoreLoader.add_constructor("tag:yaml.org,2002:int", construct_int)
    CoreLoader.add_constructor("tag:yaml.org,2002:float", construct_float)
    CoreLoader.add_constructor("tag:yaml.org,2002:bool", construct_bool)
    CoreLoader.add_constructor("tag:yaml.org,2002:map", construct_mapping)
    return CoreLoader


__all__ = [
    "MAX_ERROR_CHARS",
    "MAX_YAML_CHARS",
    "MAX_YAML_NODES",
    "YamlRefused",
    "load_yaml",
    "parse_frontmatter",
    "safe_yaml_loader",
]
