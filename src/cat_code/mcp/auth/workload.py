"""Workload identity federation (SEP-1933): a program with no person and no client secret
signs in with the token its platform gave it (a Kubernetes service-account token, a
cloud's or a CI system's OIDC token), sent as the RFC 7523 JWT bearer grant
(``grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer``, ``assertion=<the JWT>``).

Invariants: the assertion is read at every sign-in (platforms rotate these files), never
logged or quoted in an error; a refused grant is not retried, nor another grant tried
(the server's answer is the user's to read).
"""

from __future__ import annotations

from pathlib import Path

from cat_code.base.files import read_bounded
from cat_code.mcp.auth.types import AuthorizationFailed, OAuthSettings

#: A workload token is a JWT of a few kilobytes; a larger file is not one.
MAX_ASSERTION_BYTES = 64_000


def workload_assertion(settings: OAuthSettings) -> str:
    """The workload's assertion: given as is, or read now from its file."""
    if settings.assertion:
        return settings.assertion.strip()
    if not settings.assertion_file:
        raise AuthorizationFailed(
            "the jwt_bearer grant needs the workload's token (oauth.assertionFile or "
            "oauth.assertion)"
        )
    path = Path(settings.assertion_file)
    try:
        raw = read_bounded(path, MAX_ASSERTION_BYTES + 1, cut=True)
    except OSError as exc:
        raise AuthorizationFailed(
            f"cannot read the workload token {path}: {exc.strerror or exc}"
        ) from None
    try:
        text = raw.decode("ascii").strip()
    except UnicodeDecodeError:
        text = ""
    if len(raw) > MAX_ASSERTION_BYTES or text.count(".") != 2 or any(c.isspace() for c in text):
        raise AuthorizationFailed(f"the workload token {path} does not hold one JWT")
    return text
