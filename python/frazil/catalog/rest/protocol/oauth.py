"""OAuth2 token requests and responses (the /v1/oauth/tokens endpoint)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import parse_qsl, urlencode

from frazil import _jsonutil as js
from frazil.errors import (
    BadRequestError,
    FrazilError,
    NotAuthorizedError,
)

# --- OAuth2 (the deprecated /v1/oauth/tokens endpoint, which Java's `credential=` uses) ------

CLIENT_CREDENTIALS = "client_credentials"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
_TOKEN_TYPES = frozenset(
    f"urn:ietf:params:oauth:token-type:{kind}"
    for kind in ("access_token", "refresh_token", "id_token", "saml1", "saml2", "jwt")
)


@dataclass(frozen=True)
class OAuthTokenRequest:
    """A token request (form-encoded): ``client_credentials`` with a client id and secret, or
    a token exchange (RFC 8693) of a subject token, which refreshes it."""

    grant_type: str
    client_id: str | None = None
    client_secret: str | None = None
    scope: str | None = None
    subject_token: str | None = None
    subject_token_type: str | None = None
    actor_token: str | None = None
    actor_token_type: str | None = None
    requested_token_type: str | None = None

    def to_form(self) -> str:
        pairs = [(k, v) for k, v in vars(self).items() if v is not None]
        return urlencode(pairs)

    @classmethod
    def from_form(cls, body: bytes | str) -> OAuthTokenRequest:
        """Parse a form body; a missing or repeated field, an unknown grant or token type is a
        BadRequestError naming it (the OAuth error ``invalid_request``)."""
        text = body.decode("utf-8", "strict") if isinstance(body, bytes) else body
        try:
            pairs = parse_qsl(text, keep_blank_values=True, strict_parsing=bool(text))
        except ValueError as error:
            raise BadRequestError(f"malformed token request form: {error}") from None
        known = set(cls.__dataclass_fields__)
        values: dict[str, str] = {}
        for key, value in pairs:
            if key in values:
                raise BadRequestError(f"token request field {key!r} is repeated")
            if key in known:
                values[key] = value
        grant = values.get("grant_type")
        if not grant:
            raise BadRequestError("token request is missing required field 'grant_type'")
        request = cls(**values)
        if grant == CLIENT_CREDENTIALS:
            pass  # the id and secret may come in a Basic Authorization header instead
        elif grant == TOKEN_EXCHANGE:
            for key in ("subject_token", "subject_token_type"):
                if not values.get(key):
                    raise BadRequestError(f"token exchange request is missing {key!r}")
            for key in ("subject_token_type", "actor_token_type", "requested_token_type"):
                if values.get(key) and values[key] not in _TOKEN_TYPES:
                    raise BadRequestError(f"token request {key} {values[key]!r} is unknown")
        else:
            raise BadRequestError(f"unsupported grant_type {grant!r}")
        return request


@dataclass(frozen=True)
class OAuthTokenResponse:
    access_token: str
    token_type: str = "bearer"
    expires_in: int | None = None
    issued_token_type: str | None = None
    refresh_token: str | None = None
    scope: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in vars(self).items() if v is not None}

    @classmethod
    def from_json(cls, node: Any) -> OAuthTokenResponse:
        what = "OAuth token response"
        obj = js.as_object(node, what)
        return cls(
            js.get_str(obj, "access_token", what),
            js.get_str(obj, "token_type", what),
            js.opt_int(obj, "expires_in", what),
            js.opt_str(obj, "issued_token_type", what),
            js.opt_str(obj, "refresh_token", what),
            js.opt_str(obj, "scope", what),
        )


OAuthErrorCode = Literal[
    "invalid_request", "invalid_client", "invalid_grant", "unauthorized_client",
    "unsupported_grant_type", "invalid_scope",
]  # fmt: skip


@dataclass(frozen=True)
class OAuthError:
    """The token endpoint's error body (RFC 6749 5.2), not an ErrorModel."""

    error: OAuthErrorCode
    error_description: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"error": self.error}
        if self.error_description is not None:
            out["error_description"] = self.error_description
        return out

    @classmethod
    def from_json(cls, node: Any) -> OAuthError:
        what = "OAuth error response"
        obj = js.as_object(node, what)
        return cls(js.get_str(obj, "error", what), js.opt_str(obj, "error_description", what))  # type: ignore[arg-type]

    def to_error(self) -> FrazilError:
        """The frazil error a client raises (Java's ``OAuthErrorHandler``)."""
        text = f"{self.error}: {self.error_description or 'no description'}"
        if self.error == "invalid_client":
            return NotAuthorizedError(f"not authorized: {text}")
        return BadRequestError(f"token request refused: {text}")
