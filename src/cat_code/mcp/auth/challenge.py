"""``WWW-Authenticate`` parsing (RFC 7235 §2.1 / RFC 6750 §3 / RFC 9728 §5.1).

A header may hold several challenges, each a scheme and either a token68 or a list of
``name=value`` parameters; names are case-insensitive, values may be quoted (with spaces
and backslash escapes), and parameters come in any order. Parsing never raises: what
cannot be read is skipped, so a malformed header is the same as a missing one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_QUOTED = r'"(?:[^"\\]|\\.)*"'
_PARAM = re.compile(rf"\s*({_TOKEN})\s*=\s*({_QUOTED}|[^\",\s][^,\s]*)\s*")
_TOKEN68 = re.compile(r"\s*([A-Za-z0-9\-._~+/]+=*)\s*(?:,|$)")
_SCHEME = re.compile(rf"[\s,]*({_TOKEN})")


@dataclass(frozen=True, slots=True)
class Challenge:
    """One challenge: its scheme (lowercased) and parameters (names lowercased)."""

    scheme: str
    params: dict[str, str] = field(default_factory=dict)
    token68: str | None = None


#: The schemes an OAuth-protected MCP server challenges with (RFC 6750, RFC 9449 §7.1).
OAUTH_SCHEMES = ("bearer", "dpop")


@dataclass(frozen=True, slots=True)
class BearerChallenge:
    """What a Bearer (or DPoP) challenge tells an MCP client (all None when absent)."""

    #: ``bearer`` or ``dpop`` (None: no such challenge).
    scheme: str | None = None
    resource_metadata: str | None = None
    scope: str | None = None
    error: str | None = None
    error_description: str | None = None


def parse_challenges(header: str) -> list[Challenge]:
    """Every challenge in one ``WWW-Authenticate`` value."""
    challenges: list[Challenge] = []
    pos, end = 0, len(header)
    while pos < end:
        scheme = _SCHEME.match(header, pos)
        if scheme is None:
            break
        pos = scheme.end()
        params: dict[str, str] = {}
        token68: str | None = None
        if pos < end and header[pos] in " \t":
            t68 = _TOKEN68.match(header, pos)
            if t68 is not None:
                token68, pos = t68.group(1), t68.end()
            else:
                while pos < end:
                    param = _PARAM.match(header, pos)
                    if param is None:
                        break
                    name, value = param.group(1).lower(), param.group(2)
                    if value.startswith('"'):
                        value = re.sub(r"\\(.)", r"\1", value[1:-1])
                    params.setdefault(name, value)
                    pos = param.end()
                    if pos < end and header[pos] == ",":
                        pos += 1
                    # A token not followed by "=" starts the next challenge.
                    if not _PARAM.match(header, pos) or _TOKEN68.match(header, pos):
                        break
        challenges.append(Challenge(scheme.group(1).lower(), params, token68))
    return challenges


def bearer_challenge(header: str | None) -> BearerChallenge:
    """The first Bearer or DPoP challenge's parameters (empty when there is none): both
    carry the same RFC 6750 / 9728 parameters."""
    for challenge in parse_challenges(header or ""):
        if challenge.scheme in OAUTH_SCHEMES:
            p = challenge.params
            return BearerChallenge(
                scheme=challenge.scheme,
                resource_metadata=p.get("resource_metadata") or None,
                scope=p.get("scope") or None,
                error=p.get("error") or None,
                error_description=p.get("error_description"),
            )
    return BearerChallenge()
