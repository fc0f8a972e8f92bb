"""Resources: what servers publish to be read (files, schemas, pages), checked and shown.

Servers send anything, so every entry of ``resources/list``, ``resources/templates/list``
and ``resources/read`` is checked here, where it crosses into our code: an entry without
its required fields is left out with a warning naming the server, optional fields of the
wrong type are dropped, and what passes is typed as the `wire` shapes. The rest turns
contents into text for people and models: text as it is, a blob of a textual type
decoded, any other blob as its type and size (never its base64), plus the decoded bytes
for whoever wants them. `expand_template`
fills an RFC 6570 template's simple ``{var}`` expressions (what completion needs), and
`template_variables` names them.
"""

from __future__ import annotations

import base64
import binascii
import logging
import re
from typing import Any, cast

from cat_code.mcp.transports.base import size_text
from cat_code.mcp.wire import ReadResourceResult, Resource, ResourceContents, ResourceTemplate

logger = logging.getLogger(__name__)

#: Optional string fields a listed resource or template may carry.
_TEXT_FIELDS = ("title", "description", "mimeType")
#: ``{var}``, ``{+var}``, ``{#var}``, ``{?a,b}`` …: RFC 6570 expressions, operator first.
_EXPRESSION = re.compile(r"\{([+#./;?&]?)([^{}]*)\}")


def _clean(entry: dict[str, Any], required: tuple[str, ...]) -> dict[str, Any] | None:
    """``entry`` with its required strings present and its optional fields of the right type."""
    if not all(isinstance(entry.get(key), str) and entry[key] for key in required):
        return None
    out = {k: v for k, v in entry.items() if k not in _TEXT_FIELDS or isinstance(v, str)}
    if "size" in out and (isinstance(out["size"], bool) or not isinstance(out["size"], int)):
        del out["size"]
    return out


def valid_resource(entry: Any, server: str) -> Resource | None:
    """One ``resources/list`` entry as a `Resource`, or None (logged) when unusable."""
    if isinstance(entry, dict):
        # A resource without a name is still readable: its URI names it.
        if isinstance(entry.get("uri"), str) and not isinstance(entry.get("name"), str):
            entry = {**entry, "name": entry["uri"]}
        cleaned = _clean(entry, ("uri", "name"))
        if cleaned is not None:
            return cast(Resource, cleaned)
    logger.warning("%s: skipping a resource without a uri: %.200r", server, entry)
    return None


def valid_template(entry: Any, server: str) -> ResourceTemplate | None:
    """One ``resources/templates/list`` entry, or None (logged) when unusable."""
    if isinstance(entry, dict):
        if isinstance(entry.get("uriTemplate"), str) and not isinstance(entry.get("name"), str):
            entry = {**entry, "name": entry["uriTemplate"]}
        cleaned = _clean(entry, ("uriTemplate", "name"))
        if cleaned is not None:
            return cast(ResourceTemplate, cleaned)
    logger.warning("%s: skipping a resource template without a uriTemplate: %.200r", server, entry)
    return None


def valid_contents(entry: Any, server: str) -> ResourceContents | None:
    """One element of ``resources/read``'s ``contents``: a uri and a text or a blob."""
    if isinstance(entry, dict) and isinstance(entry.get("uri"), str):
        out = {k: v for k, v in entry.items() if k != "mimeType" or isinstance(v, str)}
        if isinstance(out.get("text"), str):
            out.pop("blob", None)
            return cast(ResourceContents, out)
        if isinstance(out.get("blob"), str):
            out.pop("text", None)
            return cast(ResourceContents, out)
    logger.warning("%s: skipping resource contents without a text or blob: %.200r", server, entry)
    return None


def valid_read_result(result: Any, server: str, uri: str) -> ReadResourceResult:
    """A ``resources/read`` result with only usable contents; raises `ValueError` if it has
    no ``contents`` array at all."""
    if not isinstance(result, dict) or not isinstance(result.get("contents"), list):
        raise ValueError(f"resources/read of {uri} has no 'contents' array")
    contents = [c for e in result["contents"] if (c := valid_contents(e, server)) is not None]
    out: dict[str, Any] = {"contents": contents}
    if isinstance(result.get("_meta"), dict):
        out["_meta"] = result["_meta"]
    return cast(ReadResourceResult, out)


# -- contents as text and bytes -----------------------------------------------------------


def blob_bytes(contents: ResourceContents) -> bytes | None:
    """A blob's decoded bytes (None for text contents or base64 that does not decode)."""
    blob = contents.get("blob")
    if not isinstance(blob, str):
        return None
    try:
        return base64.b64decode(blob, validate=False)
    except (binascii.Error, ValueError):
        return None


def describe_blob(contents: ResourceContents) -> str:
    """``[binary resource URI: TYPE, SIZE]``: a blob for a reader who cannot use its bytes."""
    mime = contents.get("mimeType") or "unknown type"
    data = blob_bytes(contents)
    size = size_text(len(data)) if data is not None else "undecodable base64"
    return f"[binary resource {contents.get('uri', '')}: {mime}, {size}]"


def _textual(mime: str) -> bool:
    mime = mime.split(";")[0].strip().lower()
    return mime.startswith("text/") or mime.endswith(("+json", "+xml")) or mime in _TEXT_TYPES


_TEXT_TYPES = ("application/json", "application/xml", "application/yaml", "application/javascript")


def decoded_text(contents: ResourceContents) -> str | None:
    """The contents as text: text as it is, a blob of a textual type that is valid UTF-8
    decoded; None for anything else (binary)."""
    text = contents.get("text")
    if isinstance(text, str):
        return text
    mime = contents.get("mimeType")
    data = blob_bytes(contents)
    if isinstance(mime, str) and _textual(mime) and data is not None:
        try:
            return data.decode()
        except UnicodeDecodeError:
            return None
    return None


def readable_text(contents: ResourceContents) -> str:
    """The contents for a reader: their text (`decoded_text`), else the blob described."""
    text = decoded_text(contents)
    return describe_blob(contents) if text is None else text


def contents_text(result: ReadResourceResult) -> str:
    """Every contents element as text, a header per element when there are several."""
    parts = []
    contents = result.get("contents", [])
    for item in contents:
        body = readable_text(item)
        if len(contents) > 1:
            mime = item.get("mimeType")
            body = f"--- {item.get('uri', '')}{f' ({mime})' if mime else ''}\n{body}"
        parts.append(body)
    return "\n".join(parts) if parts else "(the resource is empty)"


# -- templates --------------------------------------------------------------------------


def template_variables(template: str) -> list[str]:
    """The variable names of an RFC 6570 template, in order (``{?a,b}`` gives a and b)."""
    names: list[str] = []
    for _, body in _EXPRESSION.findall(template):
        for spec in body.split(","):
            name = spec.split(":")[0].rstrip("*").strip()
            if name and name not in names:
                names.append(name)
    return names


def template_prefix(template: str) -> str:
    """The literal start of a template, up to its first expression."""
    match = _EXPRESSION.search(template)
    return template[: match.start()] if match else template


def expand_template(template: str, values: dict[str, str]) -> str:
    """``template`` with each simple ``{var}`` replaced by its value (others left as they are)."""

    def fill(match: re.Match[str]) -> str:
        operator, body = match.groups()
        if operator or body not in values:
            return match.group(0)
        return values[body]

    return _EXPRESSION.sub(fill, template)


__all__ = [
    "blob_bytes",
    "contents_text",
    "decoded_text",
    "describe_blob",
    "expand_template",
    "readable_text",
    "template_prefix",
    "template_variables",
    "valid_contents",
    "valid_read_result",
    "valid_resource",
    "valid_template",
]
