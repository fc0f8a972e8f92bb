"""MCP wire shapes as the spec defines them, used where wire data crosses into our code.

Field names and optionality follow the spec's ``schema.ts`` (2025-06-18 through
2026-07-28; a field one era lacks is simply optional here). Classes are ``total=False``
where fields are optional, with ``Required`` on what the spec requires. These types
describe; they do not validate: a server can send anything, so code that reads them keeps
its ``isinstance`` checks. Where JSON parsed as ``Any`` is first given one of these types,
that is a ``cast``: a statement about the spec, not a check of the data.
"""

# No ``from __future__ import annotations``: at runtime TypedDict reads ``Required`` from
# the evaluated annotations (``__required_keys__`` would be wrong with strings on 3.11).
from typing import Any, Literal, Required, TypedDict

#: ``_meta``: free-form, reserved for protocol and extension metadata.
Meta = dict[str, Any]
Role = Literal["user", "assistant"]


class Icon(TypedDict, total=False):
    """An icon a server offers for display (2025-11-25+)."""

    src: Required[str]
    mimeType: str
    sizes: list[str]
    theme: Literal["light", "dark"]


class ToolAnnotations(TypedDict, total=False):
    """Hints about a tool's behaviour; untrusted unless the server is trusted."""

    title: str
    readOnlyHint: bool
    destructiveHint: bool
    idempotentHint: bool
    openWorldHint: bool


class ToolExecution(TypedDict, total=False):
    """How a tool may be run as a task (2025-11-25 only; an extension from 2026)."""

    taskSupport: Literal["forbidden", "optional", "required"]


class ToolDefinition(TypedDict, total=False):
    """One entry of a ``tools/list`` result (the spec's ``Tool``)."""

    name: Required[str]
    title: str
    description: str
    #: A JSON Schema whose root is ``{"type": "object", ...}``.
    inputSchema: Required[dict[str, Any]]
    outputSchema: dict[str, Any]
    annotations: ToolAnnotations
    icons: list[Icon]
    execution: ToolExecution
    _meta: Meta


class Annotations(TypedDict, total=False):
    """Hints on a content block: who it is for, how much it matters."""

    audience: list[Role]
    priority: float
    lastModified: str


class TextContent(TypedDict, total=False):
    type: Required[Literal["text"]]
    text: Required[str]
    annotations: Annotations
    _meta: Meta


class ImageContent(TypedDict, total=False):
    type: Required[Literal["image"]]
    #: Base64.
    data: Required[str]
    mimeType: Required[str]
    annotations: Annotations
    _meta: Meta


class AudioContent(TypedDict, total=False):
    """Audio (2025-03-26+)."""

    type: Required[Literal["audio"]]
    #: Base64.
    data: Required[str]
    mimeType: Required[str]
    annotations: Annotations
    _meta: Meta


class ResourceLink(TypedDict, total=False):
    """A pointer to a resource (2025-06-18+); not promised to appear in ``resources/list``."""

    type: Required[Literal["resource_link"]]
    uri: Required[str]
    name: Required[str]
    title: str
    description: str
    mimeType: str
    size: int
    icons: list[Icon]
    annotations: Annotations
    _meta: Meta


class TextResourceContents(TypedDict, total=False):
    uri: Required[str]
    mimeType: str
    text: Required[str]
    _meta: Meta


class BlobResourceContents(TypedDict, total=False):
    uri: Required[str]
    mimeType: str
    #: Base64.
    blob: Required[str]
    _meta: Meta


class EmbeddedResource(TypedDict, total=False):
    """A resource's contents carried inside the result."""

    type: Required[Literal["resource"]]
    resource: Required[TextResourceContents | BlobResourceContents]
    annotations: Annotations
    _meta: Meta


ContentBlock = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource


class CallToolResult(TypedDict, total=False):
    """The result of ``tools/call``; ``isError`` marks a failure the model should read."""

    content: Required[list[ContentBlock]]
    #: A JSON object up to 2025-11-25; any JSON value from 2026-07-28.
    structuredContent: object
    isError: bool
    #: 2026-07-28+: ``"complete"`` when absent.
    resultType: str
    _meta: Meta


# -- resources, prompts, completion (the server features beyond tools) ---------------------


class Resource(TypedDict, total=False):
    """One entry of a ``resources/list`` result."""

    uri: Required[str]
    name: Required[str]
    title: str
    description: str
    mimeType: str
    size: int
    icons: list[Icon]
    annotations: Annotations
    _meta: Meta


class ResourceTemplate(TypedDict, total=False):
    """One entry of a ``resources/templates/list`` result (an RFC 6570 URI template)."""

    uriTemplate: Required[str]
    name: Required[str]
    title: str
    description: str
    mimeType: str
    icons: list[Icon]
    annotations: Annotations
    _meta: Meta


ResourceContents = TextResourceContents | BlobResourceContents


class ReadResourceResult(TypedDict, total=False):
    """The result of ``resources/read``: one or more contents (a folder may give several)."""

    contents: Required[list[ResourceContents]]
    _meta: Meta


class PromptArgument(TypedDict, total=False):
    name: Required[str]
    title: str
    description: str
    required: bool


class Prompt(TypedDict, total=False):
    """One entry of a ``prompts/list`` result."""

    name: Required[str]
    title: str
    description: str
    arguments: list[PromptArgument]
    icons: list[Icon]
    _meta: Meta


class PromptMessage(TypedDict):
    role: Role
    content: ContentBlock


class GetPromptResult(TypedDict, total=False):
    """The result of ``prompts/get``."""

    description: str
    messages: Required[list[PromptMessage]]
    _meta: Meta


class PromptReference(TypedDict, total=False):
    type: Required[Literal["ref/prompt"]]
    name: Required[str]


class ResourceTemplateReference(TypedDict, total=False):
    type: Required[Literal["ref/resource"]]
    uri: Required[str]


CompletionReference = PromptReference | ResourceTemplateReference


class Completion(TypedDict, total=False):
    """What ``completion/complete`` suggests (at most 100 values)."""

    values: Required[list[str]]
    total: int
    hasMore: bool
