"""Finding a server's authorization server: Protected Resource Metadata (RFC 9728), then
the authorization server's metadata (RFC 8414 with path insertion, OpenID Connect
discovery), or the 2025-03-26 fallback (metadata at the MCP server's origin, else the
default ``/authorize`` ``/token`` ``/register``).

Invariants: the PRM's ``resource`` covers the server's URL (same scheme, host and port,
its path a segment prefix) or the metadata is refused; a metadata document whose
``issuer`` differs from the issuer its URL was built from is never used; endpoints are
``https`` (``http`` only on a loopback host); ``resource`` and ``issuer`` are kept as the
raw strings the server sent (URL parsers normalise, and both are compared byte for byte).
"""

from __future__ import annotations

import ipaddress
import logging
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx2

from cat_code.mcp.auth._http import json_object, send, where
from cat_code.mcp.auth.types import AuthorizationFailed
from cat_code.mcp.versions import LATEST_HANDSHAKE_VERSION

logger = logging.getLogger(__name__)

_PROBE_HEADERS = {"accept": "application/json", "mcp-protocol-version": LATEST_HANDSHAKE_VERSION}


@dataclass(frozen=True, slots=True)
class ResourceMetadata:
    """A server's Protected Resource Metadata (the fields a client uses)."""

    url: str
    resource: str
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class AuthServerMetadata:
    """An authorization server's metadata (RFC 8414), already checked."""

    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    registration_endpoint: str | None = None
    scopes_supported: tuple[str, ...] | None = None
    code_challenge_methods_supported: tuple[str, ...] | None = None
    token_endpoint_auth_methods_supported: tuple[str, ...] | None = None
    grant_types_supported: tuple[str, ...] | None = None
    client_id_metadata_document_supported: bool = False
    authorization_response_iss_parameter_supported: bool = False
    #: RFC 9449 §5.1: the server issues DPoP-bound tokens for proofs signed with these.
    dpop_signing_alg_values_supported: tuple[str, ...] | None = None
    #: No metadata at all: the 2025-03-26 default endpoints at the server's origin.
    defaults: bool = False


# -- URLs ------------------------------------------------------------------------------


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def resource_metadata_urls(server_url: str, header_url: str | None = None) -> list[str]:
    """Where to look for PRM, in order: the challenge's URL, path-based, root."""
    origin, path = _origin(server_url), urlsplit(server_url).path.rstrip("/")
    urls = [header_url] if header_url else []
    if path:
        urls.append(f"{origin}/.well-known/oauth-protected-resource{path}")
    urls.append(f"{origin}/.well-known/oauth-protected-resource")
    return urls


def auth_server_metadata_urls(issuer: str) -> list[str]:
    """Where an issuer's metadata lives, in the spec's order (RFC 8414 §3.1 insertion)."""
    origin, path = _origin(issuer), urlsplit(issuer).path.rstrip("/")
    if not path:
        return [
            f"{origin}/.well-known/oauth-authorization-server",
            f"{origin}/.well-known/openid-configuration",
        ]
    return [
        f"{origin}/.well-known/oauth-authorization-server{path}",
        f"{origin}/.well-known/openid-configuration{path}",
        f"{origin}{path}/.well-known/openid-configuration",
    ]


def is_loopback(host: str) -> bool:
    """Whether ``host`` is this machine (``localhost`` or a loopback address)."""
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def require_secure(url: str, what: str) -> None:
    """Refuse an endpoint that is not ``https`` (``http`` allowed on a loopback host)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme == "https" and parts.hostname:
        return
    if scheme == "http" and parts.hostname and is_loopback(parts.hostname):
        return
    raise AuthorizationFailed(
        f"the authorization server's {what} ({where(url)}) is not an https URL; "
        "cat-code sends credentials only over https (or http to this machine)"
    )


def _may_fetch(url: str, server_url: str) -> bool:
    """Resource metadata comes over https, from a loopback host, or from the MCP server's
    own origin (no less safe than talking to the server at all)."""
    parts, server = urlsplit(url), urlsplit(server_url)
    scheme = parts.scheme.lower()
    if scheme == "https" and parts.hostname:
        return True
    if scheme != "http" or not parts.hostname:
        return False
    if is_loopback(parts.hostname):
        return True
    try:
        return (parts.hostname, _port(parts)) == (server.hostname, _port(server)) and (
            server.scheme.lower() == "http"
        )
    except ValueError:
        return False


def resource_covers(resource: str, server_url: str) -> bool:
    """Whether a PRM ``resource`` names this server: same scheme, host and port, and its
    path a segment prefix of the server's path."""
    if any(c in resource for c in "\\@") or any(c.isspace() or ord(c) < 0x20 for c in resource):
        # Parsers disagree on such URLs (``https://a\\@b/``: host b here, a for others):
        # the authorization server might read another host than the one checked.
        return False
    r, s = urlsplit(resource), urlsplit(server_url)
    try:
        same_origin = (r.scheme.lower(), r.hostname, _port(r)) == (
            s.scheme.lower(),
            s.hostname,
            _port(s),
        )
    except ValueError:
        return False
    if not same_origin or r.fragment:
        return False
    prefix, path = r.path.rstrip("/"), s.path.rstrip("/")
    return path == prefix or path.startswith(prefix + "/")


def _port(parts: Any) -> int | None:
    port: int | None = parts.port
    if port is None:
        return {"http": 80, "https": 443}.get(parts.scheme.lower())
    return port


# -- Protected Resource Metadata -------------------------------------------------------


async def fetch_resource_metadata(
    http: httpx2.AsyncClient, server_url: str, header_url: str | None = None
) -> ResourceMetadata | None:
    """The server's PRM from the first place that has it, checked against the server's
    URL; None when there is none (the 2025-03-26 fallback applies)."""
    for url in resource_metadata_urls(server_url, header_url):
        if not _may_fetch(url, server_url):
            logger.debug("not fetching resource metadata from %s (not https)", where(url))
            continue
        response = await send(http, "GET", url, headers=_PROBE_HEADERS, what="resource metadata")
        data = json_object(response) if response.status_code == 200 else None
        if data is None:
            logger.debug("no resource metadata at %s (HTTP %s)", where(url), response.status_code)
            continue
        resource = data.get("resource")
        servers = data.get("authorization_servers")
        if not isinstance(resource, str) or not _strings(servers):
            logger.debug("resource metadata at %s lacks resource or servers", where(url))
            continue
        if not resource_covers(resource, server_url):
            raise AuthorizationFailed(
                f"the server's resource metadata ({where(url)}) is for {where(resource)}, "
                f"not for {where(server_url)}; cat-code will not sign in to it"
            )
        scopes = data.get("scopes_supported")
        return ResourceMetadata(
            url=url,
            resource=resource,
            authorization_servers=_tuple(servers) or (),
            scopes_supported=_tuple(scopes) if _strings(scopes) else None,
        )
    return None


# -- Authorization-server metadata -----------------------------------------------------


def _issuer_matches(found: str, expected: str) -> bool:
    if found == expected:
        return True
    # A bare origin with or without its "/" is the same issuer (URL parsers add it).
    return not urlsplit(expected).path.strip("/") and found.rstrip("/") == expected.rstrip("/")


async def fetch_auth_server_metadata(http: httpx2.AsyncClient, issuer: str) -> AuthServerMetadata:
    """The metadata of ``issuer``, from the first well-known URL that has it."""
    # Metadata over plain http could name any endpoints: someone on the path would get
    # the code, the verifier and a client secret.
    require_secure(issuer, "issuer")
    mismatch: str | None = None
    for url in auth_server_metadata_urls(issuer):
        response = await send(http, "GET", url, headers=_PROBE_HEADERS, what="server metadata")
        data = json_object(response) if response.status_code == 200 else None
        if data is None:
            logger.debug("no server metadata at %s (HTTP %s)", where(url), response.status_code)
            if response.status_code >= 500:
                break
            continue
        found = data.get("issuer")
        if not isinstance(found, str) or not _issuer_matches(found, issuer):
            mismatch = f"{where(url)} names issuer {found!r}"
            logger.debug("server metadata at %s: issuer mismatch", where(url))
            continue
        return _metadata(data, issuer, where(url))
    if mismatch:
        raise AuthorizationFailed(
            f"the authorization server {issuer} is not who its metadata says ({mismatch}); "
            "cat-code will not use it"
        )
    raise AuthorizationFailed(f"the authorization server {issuer} publishes no metadata")


async def fallback_auth_server_metadata(
    http: httpx2.AsyncClient, server_url: str
) -> AuthServerMetadata:
    """The 2025-03-26 way for a server with no PRM: metadata at its origin, else the
    default endpoints there."""
    origin = _origin(server_url)
    url = f"{origin}/.well-known/oauth-authorization-server"
    response = await send(http, "GET", url, headers=_PROBE_HEADERS, what="server metadata")
    data = json_object(response) if response.status_code == 200 else None
    if data is not None:
        found = data.get("issuer")
        if not isinstance(found, str) or not _issuer_matches(found, origin):
            raise AuthorizationFailed(
                f"the server metadata at {where(url)} names issuer {found!r}, not {origin}; "
                "cat-code will not use it"
            )
        return _metadata(data, origin, where(url))
    if response.status_code not in (404, 405, 410):
        raise AuthorizationFailed(
            f"the server has no resource metadata and {where(url)} answered "
            f"HTTP {response.status_code}"
        )
    logger.debug("no metadata at %s: using the default endpoints", where(url))
    metadata = AuthServerMetadata(
        issuer=origin,
        authorization_endpoint=f"{origin}/authorize",
        token_endpoint=f"{origin}/token",
        registration_endpoint=f"{origin}/register",
        defaults=True,
    )
    _check_endpoints(metadata)
    return metadata


def _metadata(data: dict[str, Any], issuer: str, source: str) -> AuthServerMetadata:
    authorize, token = data.get("authorization_endpoint"), data.get("token_endpoint")
    if not isinstance(authorize, str) or not isinstance(token, str):
        raise AuthorizationFailed(
            f"the server metadata at {source} lacks authorization_endpoint or token_endpoint"
        )
    register = data.get("registration_endpoint")
    metadata = AuthServerMetadata(
        issuer=issuer,
        authorization_endpoint=authorize,
        token_endpoint=token,
        registration_endpoint=register if isinstance(register, str) else None,
        scopes_supported=_tuple(data.get("scopes_supported")),
        code_challenge_methods_supported=_tuple(data.get("code_challenge_methods_supported")),
        token_endpoint_auth_methods_supported=_tuple(
            data.get("token_endpoint_auth_methods_supported")
        ),
        grant_types_supported=_tuple(data.get("grant_types_supported")),
        client_id_metadata_document_supported=data.get("client_id_metadata_document_supported")
        is True,
        authorization_response_iss_parameter_supported=data.get(
            "authorization_response_iss_parameter_supported"
        )
        is True,
        dpop_signing_alg_values_supported=_tuple(data.get("dpop_signing_alg_values_supported")),
    )
    _check_endpoints(metadata)
    return metadata


def _check_endpoints(metadata: AuthServerMetadata) -> None:
    require_secure(metadata.authorization_endpoint, "authorization endpoint")
    require_secure(metadata.token_endpoint, "token endpoint")
    if metadata.registration_endpoint:
        require_secure(metadata.registration_endpoint, "registration endpoint")


def _strings(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)


def _tuple(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, list):
        return tuple(v for v in value if isinstance(v, str))
    return None
