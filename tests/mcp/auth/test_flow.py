"""The authorization-code flow: PKCE, scopes, the URL, and the RFC 9207 ``iss`` table."""

from __future__ import annotations

import base64
import hashlib
from urllib.parse import parse_qsl, urlsplit

import pytest

from cat_code.mcp.auth.discovery import AuthServerMetadata
from cat_code.mcp.auth.flow import (
    PendingAuthorization,
    authorization_url,
    check_response,
    choose_scope,
    pkce_challenge,
    require_pkce,
)
from cat_code.mcp.auth.types import AuthorizationFailed

ISSUER = "https://auth.example.com"


def _metadata(**kw: object) -> AuthServerMetadata:
    base: dict[str, object] = {
        "issuer": ISSUER,
        "authorization_endpoint": f"{ISSUER}/authorize?tenant=x",
        "token_endpoint": f"{ISSUER}/token",
        "code_challenge_methods_supported": ("S256",),
    }
    return AuthServerMetadata(**{**base, **kw})  # type: ignore[arg-type]


def _pending(iss_supported: bool = False) -> PendingAuthorization:
    return PendingAuthorization(
        ISSUER, "http://127.0.0.1:1/cb", "https://m/mcp", None, iss_supported
    )


def test_the_pkce_challenge_is_the_s256_of_the_verifier() -> None:
    # RFC 7636 appendix B.
    verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    assert pkce_challenge(verifier) == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    pending = _pending()
    digest = hashlib.sha256(pending.code_verifier.encode()).digest()
    assert pending.code_challenge == base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    assert len(pending.code_verifier) >= 43


def test_a_server_that_does_not_list_s256_is_refused_unless_it_has_no_metadata() -> None:
    with pytest.raises(AuthorizationFailed, match="S256"):
        require_pkce(_metadata(code_challenge_methods_supported=None))
    with pytest.raises(AuthorizationFailed):
        require_pkce(_metadata(code_challenge_methods_supported=("plain",)))
    require_pkce(_metadata(code_challenge_methods_supported=None, defaults=True))


def test_scopes_come_from_the_challenge_then_the_resource_metadata_then_nowhere() -> None:
    assert choose_scope("mcp:basic", ["a", "b"]) == "mcp:basic"
    assert choose_scope(None, ["a", "b"]) == "a b"
    assert choose_scope(None, None) is None
    assert choose_scope("mcp:write", None, previous="mcp:basic mcp:write") == "mcp:basic mcp:write"


def test_offline_access_is_asked_for_only_when_the_server_lists_it() -> None:
    with_it = _metadata(scopes_supported=("mcp", "offline_access"))
    assert choose_scope("mcp", None, with_it) == "mcp offline_access"
    assert choose_scope(None, ["mcp", "offline_access"], _metadata()) == "mcp"


def test_the_authorization_url_carries_pkce_state_resource_and_scope() -> None:
    pending = PendingAuthorization(ISSUER, "http://127.0.0.1:1/cb", "https://m/mcp", "a b", False)
    url = authorization_url(_metadata(), "client-1", pending)
    params = dict(parse_qsl(urlsplit(url).query))
    assert params == {
        "tenant": "x",
        "response_type": "code",
        "client_id": "client-1",
        "redirect_uri": "http://127.0.0.1:1/cb",
        "state": pending.state,
        "code_challenge": pending.code_challenge,
        "code_challenge_method": "S256",
        "resource": "https://m/mcp",
        "scope": "a b",
    }


@pytest.mark.parametrize(
    ("supported", "iss", "accepted"),
    [
        (True, ISSUER, True),
        (True, None, False),
        (True, ISSUER + "/", False),
        (False, ISSUER, True),
        (False, "https://evil.example.com", False),
        (False, None, True),
        (True, "https://AUTH.example.com", False),
    ],
)
def test_the_iss_parameter_is_checked_as_rfc_9207_says(
    supported: bool, iss: str | None, accepted: bool
) -> None:
    pending = _pending(iss_supported=supported)
    response = {"code": "c", "state": pending.state}
    if iss is not None:
        response["iss"] = iss
    if accepted:
        assert check_response(response, pending) == "c"
    else:
        with pytest.raises(AuthorizationFailed):
            check_response(response, pending)


def test_an_error_from_the_wrong_issuer_is_never_shown() -> None:
    pending = _pending()
    response = {
        "state": pending.state,
        "iss": "https://evil.example.com",
        "error": "access_denied",
        "error_description": "go to evil.example.com/phish",
    }
    with pytest.raises(AuthorizationFailed) as caught:
        check_response(response, pending)
    assert "phish" not in str(caught.value)
    assert "access_denied" not in str(caught.value)


def test_a_response_with_another_state_is_dropped() -> None:
    pending = _pending()
    with pytest.raises(AuthorizationFailed, match="state"):
        check_response({"code": "c", "state": "other"}, pending)
