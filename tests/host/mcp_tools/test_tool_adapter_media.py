"""Images and audio of a result as `Media`: checked base64, an image's type read from its bytes."""

from __future__ import annotations

import base64
from typing import Any, cast

import pytest

from cat_code.host.mcp_tools.tool_adapter import flatten_result, media_of
from cat_code.mcp.wire import CallToolResult, ContentBlock
from cat_code.tools.base import Media

HEADERS = {
    "image/png": b"\x89PNG\r\n\x1a\n",
    "image/jpeg": b"\xff\xd8\xff\xe0",
    "image/gif": b"GIF89a",
    "image/webp": b"RIFF\x10\x00\x00\x00WEBPVP8 ",
}


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def block(kind: str, data: Any, mime: Any) -> ContentBlock:
    return cast(ContentBlock, {"type": kind, "data": data, "mimeType": mime})


@pytest.mark.parametrize("mime", list(HEADERS))
def test_an_image_of_a_type_models_take_becomes_media(mime: str) -> None:
    data = b64(HEADERS[mime] + b"\0" * 32)
    assert media_of(block("image", data, mime)) == Media("image", mime, data)


def test_an_image_whose_bytes_are_another_type_gets_the_type_of_its_bytes() -> None:
    data = b64(HEADERS["image/jpeg"] + b"\0" * 8)
    assert media_of(block("image", data, "image/png")) == Media("image", "image/jpeg", data)
    assert media_of(block("image", data, "IMAGE/PNG; x=y")) == Media("image", "image/jpeg", data)


def test_an_image_that_is_not_the_type_it_claims_is_left_out() -> None:
    # A model API rejects the whole request over it, and it would stay in the conversation.
    assert media_of(block("image", b64(b"not an image at all"), "image/png")) is None


def test_other_image_types_and_audio_keep_their_declared_type() -> None:
    svg, wav = b64(b"<svg/>"), b64(b"RIFF....WAVEfmt ")
    assert media_of(block("image", svg, "image/svg+xml")) == Media("image", "image/svg+xml", svg)
    assert media_of(block("audio", wav, "audio/wav")) == Media("audio", "audio/wav", wav)


def test_base64_wrapped_in_lines_is_joined() -> None:
    raw = HEADERS["image/png"] + bytes(range(200))
    wrapped = "\n".join(b64(raw)[i : i + 76] for i in range(0, len(b64(raw)), 76))
    assert media_of(block("image", wrapped, "image/png")) == Media("image", "image/png", b64(raw))


@pytest.mark.parametrize(
    "bad",
    [
        block("image", "not base64!!", "image/png"),
        block("audio", "%%%%", "audio/wav"),
        block("image", "", "image/png"),
        block("image", 42, "image/png"),
        block("image", b64(HEADERS["image/png"]), None),
        cast(ContentBlock, {"type": "text", "text": "hi"}),
        cast(ContentBlock, "a string"),
    ],
)
def test_unusable_blocks_give_no_media(bad: ContentBlock) -> None:
    assert media_of(bad) is None


def test_a_flattened_result_keeps_placeholders_in_its_text_and_the_media_beside() -> None:
    png = b64(HEADERS["image/png"] + b"\0" * 8)
    result = cast(CallToolResult, {"content": [
        {"type": "text", "text": "look:"},
        {"type": "image", "data": png, "mimeType": "image/png"},
        {"type": "audio", "data": b64(b"RIFF"), "mimeType": "audio/wav"},
        {"type": "image", "data": "broken", "mimeType": "image/png"},
    ]})  # fmt: skip

    flat = flatten_result(result)

    assert flat.content.splitlines() == [
        "look:",
        "[image: image/png, 16 bytes]",
        "[audio: audio/wav, 4 bytes]",
        "[image: image/png, 4 bytes]",
    ]
    assert flat.media == [
        Media("image", "image/png", png),
        Media("audio", "audio/wav", b64(b"RIFF")),
    ]
