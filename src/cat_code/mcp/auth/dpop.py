"""DPoP (RFC 9449): access tokens bound to a key only this client holds.

Used when the authorization server lists ES256 in ``dpop_signing_alg_values_supported``.
One EC P-256 key per MCP server, made once and kept in the token store (0600) beside the
tokens bound to it, so they stay usable across runs. Every token request and every
request that presents a DPoP-bound token carries a fresh proof: a JWT (``typ``
``dpop+jwt``, the public key as ``jwk``) over the method (``htm``), the URL without query
or fragment (``htu``), ``iat``, a new ``jti`` and, with a token, ``ath`` (its SHA-256).
A server may demand a nonce (``DPoP-Nonce`` header, error ``use_dpop_nonce``): the last
one each endpoint (token endpoint, MCP endpoint: an ``htu``) sent is put in every later
proof to it, and the refused request is sent once more. Proofs and keys never reach a log line.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
import uuid
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

#: The one JWS algorithm cat-code signs proofs with (a P-256 key).
DPOP_ALGORITHM = "ES256"
#: Where servers hand out nonces, and the error that says one is now needed.
NONCE_HEADER = "dpop-nonce"
USE_DPOP_NONCE = "use_dpop_nonce"


def new_private_key_pem() -> str:
    """A fresh EC P-256 private key, as unencrypted PKCS#8 PEM (what the store keeps)."""
    # Imported here: only servers that use DPoP need them, and they are heavy imports.
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


def htu(url: str) -> str:
    """The ``htu`` of a request to ``url``: the URL without its query and fragment."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def access_token_hash(access_token: str) -> str:
    """``ath``: base64url (no padding) of the SHA-256 of the token's ASCII bytes."""
    return _b64url(hashlib.sha256(access_token.encode("ascii")).digest())


def jwk_thumbprint(jwk: Mapping[str, str]) -> str:
    """The RFC 7638 SHA-256 thumbprint of an EC public JWK (what a bound token's
    ``cnf.jkt`` names)."""
    members = {k: jwk[k] for k in ("crv", "kty", "x", "y")}
    canonical = json.dumps(members, separators=(",", ":"), sort_keys=True)
    return _b64url(hashlib.sha256(canonical.encode()).digest())


def _endpoint(url: str) -> str:
    """Where a nonce holds: the ``htu``, scheme and host lowercased (an authorization
    server and an MCP server may share an origin, never an endpoint)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path, "", ""))


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class DpopProver:
    """Makes the proofs for one key, and keeps the nonces servers gave (per endpoint)."""

    def __init__(self, private_key_pem: str) -> None:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec

        try:
            key = serialization.load_pem_private_key(private_key_pem.encode(), password=None)
        except (ValueError, TypeError) as exc:
            raise ValueError("the DPoP key cannot be read") from exc
        if not isinstance(key, ec.EllipticCurvePrivateKey) or key.curve.name != "secp256r1":
            raise ValueError("the DPoP key is not an EC P-256 key")
        self._key = key
        numbers = key.public_key().public_numbers()
        #: The public key as a JWK (the proof's ``jwk`` header).
        self.jwk: dict[str, str] = {
            "kty": "EC",
            "crv": "P-256",
            "x": _b64url(numbers.x.to_bytes(32, "big")),
            "y": _b64url(numbers.y.to_bytes(32, "big")),
        }
        #: Its thumbprint: tokens bound to this key carry it as ``cnf.jkt``.
        self.thumbprint = jwk_thumbprint(self.jwk)
        self._nonces: dict[str, str] = {}

    def __repr__(self) -> str:
        return f"DpopProver(jkt={self.thumbprint!r})"

    def proof(self, method: str, url: str, *, access_token: str | None = None) -> str:
        """A fresh proof for one request (with ``ath`` when it presents a token, and the
        nonce ``url``'s endpoint last gave, if any)."""
        import jwt

        claims: dict[str, Any] = {
            "jti": uuid.uuid4().hex,
            "htm": method.upper(),
            "htu": htu(url),
            "iat": int(time.time()),
        }
        if access_token is not None:
            claims["ath"] = access_token_hash(access_token)
        nonce = self.nonce(url)
        if nonce is not None:
            claims["nonce"] = nonce
        headers = {"typ": "dpop+jwt", "jwk": self.jwk}
        return jwt.encode(claims, self._key, algorithm=DPOP_ALGORITHM, headers=headers)

    def nonce(self, url: str) -> str | None:
        """The nonce ``url``'s endpoint last gave (None: none yet)."""
        return self._nonces.get(_endpoint(url))

    def learn_nonce(self, url: str, headers: Mapping[str, str]) -> bool:
        """Keep the nonce a response from ``url`` carries; whether it is a new one."""
        value = headers.get(NONCE_HEADER)
        # RFC 9449 §8.1: a nonce is 1*NQCHAR (visible ASCII but '"' and '\').
        if not value or not all("!" <= c <= "~" and c not in '"\\' for c in value):
            return False
        endpoint = _endpoint(url)
        if self._nonces.get(endpoint) == value:
            return False
        self._nonces[endpoint] = value
        return True
