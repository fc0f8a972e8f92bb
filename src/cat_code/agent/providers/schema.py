"""Tool input schemas adapted to what model APIs accept.

Both the Anthropic and the OpenAI APIs want a tool's input schema to be a plain object
schema: ``"type": "object"`` at the root and no root-level ``anyOf``/``oneOf``/``allOf``
(Anthropic rejects those outright; MCP servers generated from union types send them).
`object_schema` rewrites such a root into one object: ``allOf`` branches are merged,
``anyOf``/``oneOf`` object branches are united (a key is required only when every branch
requires it, and the description says the shapes). Nested schemas are left alone. The
input is never mutated.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

logger = logging.getLogger(__name__)

_COMBINERS = ("allOf", "anyOf", "oneOf")


def object_schema(schema: Any) -> dict[str, Any]:
    """``schema`` as an object schema with no root-level combiners."""
    if not isinstance(schema, dict):
        return {"type": "object", "properties": {}}
    root: dict[str, Any] = copy.deepcopy(schema)
    root = _inline_root_ref(root, root)
    if isinstance(root.get("allOf"), list):
        branches = root.pop("allOf")
        for branch in branches:
            part = _inline_root_ref(branch, root) if isinstance(branch, dict) else {}
            _merge_into(root, part, required=True)
    for key in ("anyOf", "oneOf"):
        if isinstance(root.get(key), list):
            _unite_into(root, [b for b in root.pop(key) if isinstance(b, dict)], root)
    if root.get("type") != "object":
        root["type"] = "object"
    if not isinstance(root.get("properties"), dict):
        root["properties"] = {}
    return root


def _inline_root_ref(node: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """``node`` with a local ``$ref`` (``#/$defs/X``) replaced by what it points to."""
    ref = node.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return node
    target: Any = root
    for part in ref[2:].split("/"):
        if not isinstance(target, dict) or part not in target:
            return node
        target = target[part]
    if not isinstance(target, dict):
        return node
    merged = {k: v for k, v in node.items() if k != "$ref"}
    for key, value in target.items():
        merged.setdefault(key, copy.deepcopy(value))
    return merged


def _merge_into(root: dict[str, Any], part: dict[str, Any], *, required: bool) -> None:
    properties = root.setdefault("properties", {})
    if isinstance(part.get("properties"), dict) and isinstance(properties, dict):
        for name, prop in part["properties"].items():
            properties.setdefault(name, prop)
    if required and isinstance(part.get("required"), list):
        root["required"] = list(dict.fromkeys([*_required(root), *_required(part)]))
    if "description" not in root and isinstance(part.get("description"), str):
        root["description"] = part["description"]


def _unite_into(root: dict[str, Any], branches: list[dict[str, Any]], defs: dict[str, Any]) -> None:
    shapes: list[str] = []
    common: set[str] | None = None
    for raw in branches:
        branch = _inline_root_ref(raw, defs)
        _merge_into(root, branch, required=False)
        properties = branch.get("properties")
        names = list(properties) if isinstance(properties, dict) else []
        required = _required(branch)
        common = set(required) if common is None else common & set(required)
        shapes.append(", ".join(names) if names else "(no keys)")
    if common:
        root["required"] = list(dict.fromkeys([*_required(root), *sorted(common)]))
    if len(shapes) > 1:
        note = "Give exactly one of these sets of keys: " + "; ".join(
            f"({i}) {shape}" for i, shape in enumerate(shapes, start=1)
        )
        description = root.get("description")
        root["description"] = f"{description} {note}" if isinstance(description, str) else note


def _required(schema: dict[str, Any]) -> list[str]:
    required = schema.get("required")
    return [r for r in required if isinstance(r, str)] if isinstance(required, list) else []
