"""The one YAML reader of subagent definitions (their frontmatter), behind one function.

Definitions come from repositories (``.claude/agents/``), so their YAML is untrusted: it
is read with ``yaml.safe_load`` (no Python objects), after a size cap, and an alias
(``*name``, the "billion laughs" device) is refused before anything is built. When the
project's shared safe YAML loader (`cat_code.mcp.frontmatter`) is present, it is used
instead; this module is then only the seam.
"""

from __future__ import annotations

from typing import Any

#: The largest frontmatter read: a definition's header is a few lines.
MAX_YAML_CHARS = 64 * 1024


def load_yaml(text: str) -> Any:
    """``text`` read as YAML; `ValueError` (one line) when it is not YAML or is refused."""
    try:
        from cat_code.mcp.frontmatter import load_yaml as shared  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        shared = None
    if shared is not None:
        return shared(text)
    if len(text) > MAX_YAML_CHARS:
        raise ValueError(f"the frontmatter is over {MAX_YAML_CHARS:,} characters")
    import yaml

    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent):
                raise ValueError("aliases (*name) are not allowed in a definition")
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(" ".join(f"not valid YAML: {exc}".split())[:200]) from None
    except RecursionError:
        raise ValueError("the frontmatter is nested too deeply") from None
