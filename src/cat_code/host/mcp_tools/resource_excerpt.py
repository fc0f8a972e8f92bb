"""A resource's text as the model gets it: at most `MAX_RESOURCE_CHARS` characters at once.

Both ways a resource reaches the model, the ``read_mcp_resource`` tool and an
``@server:uri`` mention in a prompt, cut its text here, the same way. A cut text is never
silent: it ends with one line saying how many characters are left and the exact
``read_mcp_resource`` call (with ``offset``) that reads on, so the model can always get
the rest, a window at a time. An excerpt that does not start at the beginning says where
it starts. Characters are Python ``str`` characters (code points), the unit of ``offset``.
"""

from __future__ import annotations

import json

#: A resource's text beyond this many characters is cut (the model's context is dear).
MAX_RESOURCE_CHARS = 100_000


def excerpt(text: str, server: str, uri: str, offset: int = 0) -> str:
    """``text`` from ``offset``, cut after `MAX_RESOURCE_CHARS` characters with a note on
    what was cut and how to read on. ``offset`` must be within ``text`` (0 always is)."""
    limit = MAX_RESOURCE_CHARS  # read here, not as a default: tests lower it
    total = len(text)
    end = min(offset + limit, total)
    out = text[offset:end]
    if offset:
        out = f"… [characters {offset}–{end} of {total}]\n{out}"
    if end < total:
        call = json.dumps({"server": server, "uri": uri, "offset": end}, ensure_ascii=False)
        out += (
            f"\n… [{total - end} more characters cut, of {total}; "
            f"read on with read_mcp_resource {call}]"
        )
    return out


__all__ = ["MAX_RESOURCE_CHARS", "excerpt"]
