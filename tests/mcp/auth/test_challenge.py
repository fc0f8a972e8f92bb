"""``WWW-Authenticate`` parsing: RFC 7235 challenges as servers really send them."""

from __future__ import annotations

from cat_code.mcp.auth.challenge import bearer_challenge, parse_challenges


def test_quoted_values_keep_their_spaces_and_escapes() -> None:
    c = bearer_challenge(r'Bearer scope="mcp:read mcp:write", error_description="a \"b\""')
    assert c.scope == "mcp:read mcp:write"
    assert c.error_description == 'a "b"'


def test_parameters_come_in_any_order_and_names_in_any_case() -> None:
    header = 'Bearer Resource_Metadata="https://x/prm", ERROR=insufficient_scope, scope="a"'
    c = bearer_challenge(header)
    assert (c.resource_metadata, c.error, c.scope) == ("https://x/prm", "insufficient_scope", "a")


def test_the_bearer_challenge_is_found_among_several() -> None:
    header = 'Basic realm="r", Negotiate abc==, bearer error="invalid_token", DPoP algs="ES256"'
    challenges = parse_challenges(header)
    assert [c.scheme for c in challenges] == ["basic", "negotiate", "bearer", "dpop"]
    assert challenges[1].token68 == "abc=="
    assert bearer_challenge(header).error == "invalid_token"


def test_a_missing_or_malformed_header_is_an_empty_challenge() -> None:
    assert bearer_challenge(None).resource_metadata is None
    assert bearer_challenge('Bearer scope="unterminated').scope is None
    assert bearer_challenge("Bearer").error is None
    assert bearer_challenge('Basic realm="x"').scope is None


def test_a_dpop_challenge_carries_the_same_parameters() -> None:
    c = bearer_challenge('DPoP algs="ES256", error="use_dpop_nonce", resource_metadata="https://x"')
    assert (c.scheme, c.error, c.resource_metadata) == ("dpop", "use_dpop_nonce", "https://x")
    assert bearer_challenge('Bearer scope="a", DPoP algs="ES256"').scheme == "bearer"
