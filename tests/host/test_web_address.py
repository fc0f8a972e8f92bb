"""A web address read as a browser reads it (`cat_code.host.web_address`), or refused."""

from __future__ import annotations

import pytest

from cat_code.host.web_address import UnsafeAddress, parse_web_address, registrable_domain


@pytest.mark.parametrize(
    ("url", "host", "site"),
    [
        ("https://accounts.google.com/signin?x=1", "accounts.google.com", "google.com"),
        ("https://a.b.co.uk:8443/p", "a.b.co.uk", "b.co.uk"),
        ("https://someone.github.io/page", "someone.github.io", "someone.github.io"),
        ("HTTPS://Accounts.Google.COM./x", "accounts.google.com.", "google.com"),
        ("https://accounts.google.com.attacker.example/", "accounts.google.com.attacker.example",
         "attacker.example"),
        ("https://аpple.com/", "xn--pple-43d.com", "xn--pple-43d.com"),  # a Cyrillic а
        ("http://localhost:3000/callback", "localhost", "localhost"),
        ("http://127.0.0.1:8123/", "127.0.0.1", "127.0.0.1"),
        ("http://[::1]:8123/", "[::1]", "[::1]"),
        ("https://example.com#frag@x", "example.com", "example.com"),
    ],
)  # fmt: skip
def test_an_address_names_the_host_a_browser_visits_and_its_registrable_domain(
    url: str, host: str, site: str
) -> None:
    address = parse_web_address(url)
    assert (address.host, address.site) == (host, site)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("https://attacker.example\\@accounts.google.com/signin", "a backslash"),
        ("https://example.com/a\\b", "a backslash"),
        ("https://accounts.google.com@attacker.example/", "a user part"),
        ("https://user:pw@example.com/", "a user part"),
        ("https://exa mple.com/", "spaces or control characters"),
        ("https://example.com/\x1b[2J", "spaces or control characters"),
        ("http://example.com/", "only https addresses are opened"),
        ("javascript:alert(1)", "only https addresses are opened, not javascript:"),
        ("file:///etc/passwd", "only https addresses are opened, not file:"),
        ("https:example.com", "does not start with https://"),
        ("https:///example.com", "does not start with https://"),
        ("//example.com", "no scheme"),
        ("https://evil%2ecom/", "percent-encoded"),
        ("https://0x7f.1/", "a number written unusually"),
        ("http://2130706433/", "a number written unusually"),
        ("https://straße.de/", "browsers spell differently"),
        ("https://example.com:99999/", "not a number up to 65535"),
        ("https://exa!mple.com/", "a browser would read otherwise"),
        ("https:///", "does not start with https://"),
        ("https://:443/", "no host"),
    ],
)
def test_an_address_whose_reading_is_in_doubt_is_refused_saying_why(url: str, reason: str) -> None:
    with pytest.raises(UnsafeAddress) as refused:
        parse_web_address(url)
    assert reason in refused.value.reason


def test_the_parts_put_the_site_apart_for_highlighting() -> None:
    address = parse_web_address("https://login.example.co.uk:8443/a?b=c")
    assert address.parts() == ("https://", "login.", "example.co.uk", ":8443/a?b=c")
    lookalike = parse_web_address("https://аpple.com/x")
    assert lookalike.lookalike and lookalike.parts() == ("https://", "", "аpple.com", "/x")


@pytest.mark.parametrize(
    ("host", "site"),
    [("co.uk", "co.uk"), ("x.co.uk", "x.co.uk"), ("a.b.c.example", "c.example"),
     ("bucket.s3.amazonaws.com", "bucket.s3.amazonaws.com"), ("intranet", "intranet")],
)  # fmt: skip
def test_the_registrable_domain_is_one_label_before_the_public_suffix(host: str, site: str) -> None:
    assert registrable_domain(host) == site
