"""A web address a server wants the user to open, read as a browser will read it.

A server names a page (URL-mode elicitation) and the user decides by its site; the site
shown must be the one the browser goes to. Python's ``urlsplit`` and browsers disagree
(browsers follow the WHATWG URL standard: for http(s) a ``\\`` is a ``/``, so
``https://attacker.example\\@accounts.google.com/`` goes to ``attacker.example``, which
``urlsplit`` calls ``accounts.google.com``). Rather than reproduce every browser rule,
`parse_web_address` accepts only addresses whose reading is not in doubt, and refuses the
rest with `UnsafeAddress` saying why: a backslash, spaces or control characters anywhere;
a user part (``user@``, which only serves to put a trusted name before the real host); a
scheme but https (http only for this machine: ``localhost``, 127.0.0.0/8, ``[::1]``);
anything but ``//`` after the scheme; a percent sign in the host (browsers decode it); a
numeric host not written as four decimal numbers (browsers read ``0x7f.1``); a non-ASCII
host IDNA 2003 and browsers (UTS 46) spell differently (``ß``, ``ς``, joiners).

The site highlighted is the host's registrable domain: the label before its public
suffix. The suffixes known (`MULTI_LABEL_SUFFIXES`) are a short hand-kept list of the
common multi-label ones (``co.uk``, ``com.au``, ``github.io``…) instead of the whole
Public Suffix List (a dependency, and a download to keep current): for a multi-label
suffix not listed the site shown is one label short (``co.xx``), never someone else's,
and the whole host is shown beside it.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

#: Public suffixes of more than one label, where each name below belongs to someone else.
#: Hand-kept, not the Public Suffix List: country second levels in common use and hosting
#: domains that give every customer a subdomain. A suffix missing here makes the site
#: shown one label too short (the suffix itself), never another owner's name.
MULTI_LABEL_SUFFIXES = frozenset(
    f"{second}.{country}"
    for country, seconds in {
        "uk": "co org ac gov me ltd plc net sch nhs police",
        "au": "com net org edu gov asn id",
        "nz": "co org net govt ac school geek gen",
        "jp": "co ne or ac go ed ad gr lg",
        "kr": "co or ac go ne re",
        "br": "com net org gov edu art",
        "cn": "com net org gov edu ac",
        "hk": "com net org gov edu idv",
        "tw": "com net org gov edu idv",
        "in": "co net org gov ac edu firm gen ind",
        "za": "co org gov ac net web",
        "il": "co org ac gov net muni",
        "th": "co in ac go or net",
        "id": "co or ac go web net",
        "sg": "com net org gov edu",
        "my": "com net org gov edu",
        "mx": "com net org gob edu",
        "ar": "com net org gob edu",
        "tr": "com net org gov edu",
        "ua": "com net org gov edu",
        "ph": "com net org gov edu",
        "vn": "com net org gov edu",
        "pk": "com net org gov edu",
        "ng": "com net org gov edu",
        "eg": "com net org gov edu",
        "sa": "com net org gov edu",
    }.items()
    for second in seconds.split()
) | frozenset(
    (
        "github.io githubusercontent.com gitlab.io pages.dev workers.dev vercel.app "
        "netlify.app herokuapp.com appspot.com web.app firebaseapp.com azurewebsites.net "
        "cloudfront.net s3.amazonaws.com blogspot.com fly.dev onrender.com ngrok.io "
        "ngrok-free.app glitch.me surge.sh r2.dev trycloudflare.com"
    ).split()
)
#: What a browser would read differently from what we show: C0, space, DEL, C1, backslash.
_AMBIGUOUS = re.compile(r"[\x00-\x20\x7f-\x9f\\]")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_HOST_LABEL = re.compile(r"[a-z0-9_-]+")
#: Characters IDNA 2003 maps away but browsers (UTS 46, non-transitional) keep: ß, ς, ZWNJ, ZWJ.
_DEVIATIONS = frozenset("\u00df\u03c2\u200c\u200d")


class UnsafeAddress(ValueError):
    """An address refused before anything is shown as its site (``reason`` says why)."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(reason)
        self.url = url
        self.reason = reason


@dataclass(frozen=True, slots=True)
class WebAddress:
    """An address as the browser will read it."""

    url: str
    scheme: str
    #: The host the browser connects to: lower case, IDNA (``xn--``) for a non-ASCII name.
    host: str
    port: int | None
    #: The registrable domain of `host` (the host itself for an IP address or one label).
    site: str
    #: The host as written in the URL, and where it is in it (for highlighting).
    written_host: str
    host_at: int
    #: Whether the name may imitate another: non-ASCII as written, or ``xn--`` labels.
    lookalike: bool

    def parts(self) -> tuple[str, str, str, str]:
        """``url`` cut for showing: (before the host, the host before its site, the site,
        the rest); a look-alike host is all "site", highlighted whole."""
        start, end = self.host_at, self.host_at + len(self.written_host)
        written = self.written_host.lower().removesuffix(".")
        if self.lookalike or not written.endswith(self.site):
            return self.url[:start], "", self.url[start:end], self.url[end:]
        cut = start + len(written) - len(self.site)
        return self.url[:start], self.url[start:cut], self.url[cut:end], self.url[end:]


def parse_web_address(url: str) -> WebAddress:
    """``url`` read as a browser reads it; raises `UnsafeAddress` when that reading is in
    doubt or it is not a web address this front end may open."""
    bad = _AMBIGUOUS.search(url)
    if bad is not None:
        what = "a backslash" if bad.group() == "\\" else "spaces or control characters"
        raise UnsafeAddress(
            url, f"it contains {what}, which a browser reads otherwise than it looks"
        )
    scheme_match = _SCHEME.match(url)
    if scheme_match is None:
        raise UnsafeAddress(url, "it is not a web address (no scheme)")
    scheme = scheme_match.group()[:-1].lower()
    if scheme not in ("https", "http"):
        raise UnsafeAddress(url, f"only https addresses are opened, not {scheme}:")
    after = scheme_match.end()
    if not url.startswith("//", after) or url.startswith("///", after):
        raise UnsafeAddress(url, f"it does not start with {scheme}:// and a host")
    host_at = after + 2
    end = min((i for i in (url.find(c, host_at) for c in "/?#") if i != -1), default=len(url))
    authority = url[host_at:end]
    if "@" in authority:
        raise UnsafeAddress(
            url, "it has a user part (user@ before the host), which hides the real site"
        )
    written_host, port = _host_and_port(url, authority)
    host, lookalike = _real_host(url, written_host)
    if scheme == "http" and not _loopback(host):
        raise UnsafeAddress(url, "only https addresses are opened (http only on this machine)")
    return WebAddress(
        url=url,
        scheme=scheme,
        host=host,
        port=port,
        site=registrable_domain(host),
        written_host=written_host,
        host_at=host_at,
        lookalike=lookalike,
    )


def _host_and_port(url: str, authority: str) -> tuple[str, int | None]:
    if authority.startswith("["):
        close = authority.find("]")
        host, rest = (authority[: close + 1], authority[close + 1 :]) if close > 0 else ("", "")
        if rest and not rest.startswith(":"):
            raise UnsafeAddress(url, "its host is not a valid IPv6 address")
        port_text = rest[1:] if rest else None
    else:
        host, colon, port_text_or_empty = authority.partition(":")
        port_text = port_text_or_empty if colon else None
    if not host:
        raise UnsafeAddress(url, "it has no host")
    if port_text is None or port_text == "":
        return host, None
    if not port_text.isascii() or not port_text.isdigit() or int(port_text) > 65535:
        raise UnsafeAddress(url, f"its port {port_text[:20]!r} is not a number up to 65535")
    return host, int(port_text)


def _real_host(url: str, written: str) -> tuple[str, bool]:
    """The host the browser connects to, and whether its name may imitate another."""
    if written.startswith("["):
        try:
            return f"[{ipaddress.IPv6Address(written[1:-1]).compressed}]", False
        except ValueError:
            raise UnsafeAddress(url, "its host is not a valid IPv6 address") from None
    if "%" in written:
        raise UnsafeAddress(url, "its host is percent-encoded, which a browser decodes")
    lookalike = not written.isascii()
    if lookalike:
        if _DEVIATIONS & set(written):
            raise UnsafeAddress(url, "its host has characters browsers spell differently")
        try:
            written_ascii = written.encode("idna").decode("ascii")
        except UnicodeError:
            raise UnsafeAddress(url, "its host is not a valid international name") from None
    else:
        written_ascii = written
    host = written_ascii.lower()
    labels = host.removesuffix(".").split(".")
    if not all(_HOST_LABEL.fullmatch(label) for label in labels):
        raise UnsafeAddress(url, "its host has characters a browser would read otherwise")
    last = labels[-1]
    if last.isdigit() or last.startswith("0x"):
        # Browsers read any numeric host as IPv4 (``0x7f.1``, ``2130706433``): only the
        # plain four-number form is taken, read the same by everyone.
        try:
            address = ipaddress.IPv4Address(host)
        except ValueError:
            raise UnsafeAddress(url, "its host is a number written unusually") from None
        return str(address), False
    lookalike = lookalike or any(label.startswith("xn--") for label in labels)
    return host, lookalike


def _loopback(host: str) -> bool:
    name = host.removesuffix(".")
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name.strip("[]")).is_loopback
    except ValueError:
        return False


def registrable_domain(host: str) -> str:
    """The part of ``host`` one owner registered: the label before its public suffix
    (``accounts.google.com`` → ``google.com``, ``a.b.co.uk`` → ``b.co.uk``); an IP address
    or a one-label name is itself."""
    name = host.removesuffix(".")
    if name.startswith("[") or name.replace(".", "").isdigit() or "." not in name:
        return name
    labels = name.split(".")
    suffix_labels = 1
    for n in range(len(labels) - 1, 1, -1):
        if ".".join(labels[-n:]) in MULTI_LABEL_SUFFIXES:
            suffix_labels = n
            break
    return ".".join(labels[-(suffix_labels + 1) :])


__all__ = [
    "MULTI_LABEL_SUFFIXES",
    "UnsafeAddress",
    "WebAddress",
    "parse_web_address",
    "registrable_domain",
]
