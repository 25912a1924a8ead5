"""Authentication of ``frazil serve``: off by default; with a static bearer ``token`` and/or
OAuth2 ``clients`` (client id -> secret), every route but ``/v1/config`` and
``/v1/oauth/tokens`` needs ``Authorization: Bearer <token>``.

The token endpoint (the OpenAPI's ``getToken``, deprecated but what Java's ``credential=``
and pyiceberg's ``credential`` use) grants ``client_credentials`` (the id and secret in the
form or in a Basic ``Authorization`` header, RFC 6749 2.3.1) and refreshes a token by token
exchange (RFC 8693: the subject token is a valid token of this server). Issued tokens are
random, kept in memory for ``token_ttl_s`` seconds and then refused.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import secrets
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from frazil.catalog.rest.protocol import (
    ACCESS_TOKEN_TYPE,
    CLIENT_CREDENTIALS,
    TOKEN_EXCHANGE,
    OAuthError,
    OAuthTokenRequest,
    OAuthTokenResponse,
)
from frazil.errors import BadRequestError, NotAuthorizedError, ValidationError

__all__ = ["Auth", "TokenRefused", "load_clients"]

DEFAULT_TOKEN_TTL_S = 3600
# Issued tokens kept at most; the oldest are dropped first (a bound on memory, not a policy).
_MAX_TOKENS = 100_000


@dataclass(frozen=True)
class TokenRefused:
    """Why the token endpoint refused: its OAuth error and HTTP status (400 or 401)."""

    error: OAuthError
    status: int


def load_clients(path: str | Path) -> dict[str, str]:
    """OAuth2 clients from a YAML (or JSON) file mapping each client id to its secret."""
    import yaml  # type: ignore[import-untyped]

    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise ValidationError(f"cannot read the clients file {path}: {error}") from None
    try:
        node = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ValidationError(f"the clients file {path} is not YAML: {error}") from None
    if not isinstance(node, dict) or not node:
        raise ValidationError(f"the clients file {path} must map client ids to secrets")
    clients: dict[str, str] = {}
    for key, value in node.items():
        if not isinstance(key, str) or not isinstance(value, str) or not key or not value:
            raise ValidationError(
                f"the clients file {path}: client {key!r} needs a non-empty string secret"
            )
        clients[key] = value
    return clients


def _same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode("utf-8"), b.encode("utf-8"))


class Auth:
    """The server's credentials: a static token, OAuth2 clients and the tokens issued."""

    def __init__(
        self,
        token: str | None = None,
        clients: Mapping[str, str] | None = None,
        token_ttl_s: int = DEFAULT_TOKEN_TTL_S,
    ) -> None:
        if token is not None and not token:
            raise ValidationError("the server's token must not be empty")
        if token_ttl_s <= 0:
            raise ValidationError(f"token_ttl_s must be positive, got {token_ttl_s}")
        self._token = token
        self._clients = dict(clients or {})
        for client_id, secret in self._clients.items():
            if not client_id or not secret or ":" in client_id:
                raise ValidationError(
                    f"OAuth2 client {client_id!r}: ids must be non-empty without ':', "
                    "secrets non-empty"
                )
        self._ttl = token_ttl_s
        self._issued: dict[str, tuple[str, float]] = {}  # token -> (client id, expiry)
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self._token is not None or bool(self._clients)

    def check(self, authorization: str | None) -> None:
        """Refuse (NotAuthorizedError) a request without a valid bearer token, when on."""
        if not self.enabled:
            return
        if not authorization:
            raise NotAuthorizedError("not authorized: this server needs a bearer token")
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise NotAuthorizedError("not authorized: expected 'Authorization: Bearer <token>'")
        if not self.valid(token.strip()):
            raise NotAuthorizedError("not authorized: the token is unknown or expired")

    def valid(self, token: str) -> bool:
        if self._token is not None and _same(token, self._token):
            return True
        with self._lock:
            issued = self._issued.get(token)
            if issued is None:
                return False
            if issued[1] < time.monotonic():
                del self._issued[token]
                return False
            return True

    def _issue(self, client_id: str) -> OAuthTokenResponse:
        token = secrets.token_urlsafe(32)
        now = time.monotonic()
        with self._lock:
            if len(self._issued) >= _MAX_TOKENS:
                for stale in [t for t, (_, expiry) in self._issued.items() if expiry < now]:
                    del self._issued[stale]
                while len(self._issued) >= _MAX_TOKENS:
                    del self._issued[next(iter(self._issued))]
            self._issued[token] = (client_id, now + self._ttl)
        return OAuthTokenResponse(
            access_token=token,
            token_type="bearer",
            expires_in=self._ttl,
            issued_token_type=ACCESS_TOKEN_TYPE,
        )

    def token(self, body: bytes, authorization: str | None) -> OAuthTokenResponse | TokenRefused:
        """Answer a token request (the form ``body``; ``authorization`` its header)."""
        try:
            request = OAuthTokenRequest.from_form(body)
        except BadRequestError as error:
            kind = "unsupported_grant_type" if "grant_type" in str(error) else "invalid_request"
            return TokenRefused(OAuthError(kind, str(error)), 400)  # type: ignore[arg-type]
        except UnicodeDecodeError:
            return TokenRefused(OAuthError("invalid_request", "the form is not UTF-8"), 400)
        if not self._clients:
            return TokenRefused(
                OAuthError(
                    "invalid_client",
                    "this server has no OAuth2 clients configured"
                    + ("" if self.enabled else ": authentication is off, no token is needed"),
                ),
                401,
            )
        if request.grant_type == CLIENT_CREDENTIALS:
            return self._client_credentials(request, authorization)
        assert request.grant_type == TOKEN_EXCHANGE
        subject = request.subject_token or ""
        with self._lock:
            issued = self._issued.get(subject)
        if issued is None or not self.valid(subject):
            return TokenRefused(
                OAuthError("invalid_grant", "the subject token is unknown or expired"), 400
            )
        return self._issue(issued[0])

    def _client_credentials(
        self, request: OAuthTokenRequest, authorization: str | None
    ) -> OAuthTokenResponse | TokenRefused:
        client_id, secret = request.client_id, request.client_secret
        if authorization and authorization[:6].lower() == "basic ":
            try:
                decoded = base64.b64decode(authorization[6:].strip(), validate=True).decode()
            except (binascii.Error, UnicodeDecodeError):
                return TokenRefused(
                    OAuthError("invalid_request", "malformed Basic authorization"), 400
                )
            client_id, _, secret = decoded.partition(":")
        if not client_id or secret is None:
            return TokenRefused(
                OAuthError("invalid_request", "client_credentials needs client_id and secret"),
                400,
            )
        expected = self._clients.get(client_id)
        # Compare against something even for an unknown id (no timing oracle for ids).
        if not _same(secret, expected if expected is not None else secrets.token_hex(16)):
            return TokenRefused(OAuthError("invalid_client", "unknown client or wrong secret"), 401)
        if expected is None:
            return TokenRefused(OAuthError("invalid_client", "unknown client or wrong secret"), 401)
        return self._issue(client_id)
