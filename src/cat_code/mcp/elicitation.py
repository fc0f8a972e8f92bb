"""URL-mode elicitation: a server sends the user to a web page (a third-party sign-in, a
payment) instead of asking for form fields.

Both eras ask the same way, with ``elicitation/create`` params ``{mode: "url", url,
message}`` (2025-11-25: a server request with an ``elicitationId``; 2026-07-28: an input
request inside ``input_required``); a 2025-11-25 server may instead refuse a request with
``-32042`` and the URL elicitations in ``data.elicitations``. The client library never opens
or fetches a URL: it hands each request to the elicitation handler, whose front end must
show the full URL and get the user's consent first (``accept`` means the user agreed to go
there; the result carries no content).
"""

from __future__ import annotations

from typing import Any

from cat_code.mcp.transports.base import JsonObject

#: The 2025-11-25 error: "this request needs the user to visit a URL first".
URL_ELICITATION_REQUIRED = -32042
#: What the client declares: forms and URLs (an empty object would mean forms only).
ELICITATION_CAPABILITY: JsonObject = {"form": {}, "url": {}}


def is_url_request(params: Any) -> bool:
    """Whether ``elicitation/create`` params ask the user to visit a URL."""
    return isinstance(params, dict) and (
        params.get("mode") == "url" or ("url" in params and "requestedSchema" not in params)
    )


def url_elicitations(data: Any) -> list[JsonObject]:
    """The URL elicitations a -32042 error carries (entries without a string URL dropped)."""
    listed = data.get("elicitations") if isinstance(data, dict) else None
    if not isinstance(listed, list):
        return []
    return [
        {**entry, "mode": "url"}
        for entry in listed
        if isinstance(entry, dict) and isinstance(entry.get("url"), str)
    ]
