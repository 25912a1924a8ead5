"""How the REST catalog authenticates its requests (spec: the OpenAPI's ``security`` section,
OAuth2 and bearer tokens; AWS SigV4 as Java's ``RESTSigV4AuthManager``).

Properties, with Java's and pyiceberg's names:

- ``token``: a bearer token sent as ``Authorization: Bearer <token>``; a table whose load
  result's ``config`` has a ``token`` (the spec's LoadTableResult) uses that one for its own
  requests (load, commit, drop, metrics, planning);
- ``credential``: ``<client_id>:<client_secret>`` (or just the secret), exchanged for a token
  by the OAuth2 client-credentials flow (RFC 6749 4.4): a form POST of ``grant_type``,
  ``client_id``, ``client_secret``, ``scope`` (property ``scope``, default ``catalog``) and,
  when set, ``audience`` and ``resource``, to ``oauth2-server-uri`` (default the deprecated
  ``<uri>/v1/oauth/tokens``);
- ``token-refresh-enabled`` (default true): a token is renewed before it expires, when
  ``min(10%, 5 min)`` of its life is left (Java's ``OAuth2Util`` refresh window). Its expiry is
  the token response's ``expires_in``, else the ``exp`` claim of a JWT, else
  ``token-expires-in-ms`` (default one hour) for a token fetched with a credential. A
  credential fetches a new token; a ``token`` alone is renewed by the token-exchange grant (RFC
  8693, the spec's third use of ``/oauth/tokens``) when ``token-exchange-enabled`` (default
  true). Renewal happens on the request that finds the token due (no background thread, so
  forked processes need nothing), and once more when the server answers 401;
- ``rest.sigv4-enabled=true``: every request is signed with AWS Signature V4 (botocore's
  ``SigV4Auth``; the ``aws`` extra's ``botocore``), for ``rest.signing-name`` (default
  ``execute-api``) in ``rest.signing-region`` (else ``client.region``, else botocore's), with
  ``rest.access-key-id``/``rest.secret-access-key``/``rest.session-token`` (else the
  ``client.*`` keys, else botocore's credential chain). A bearer header of the other schemes
  moves to ``Original-Authorization``, inside the signature, as Java relocates it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from frazil.catalog.rest._http import Auth, Request, Response, _bool_property, _int_property
from frazil.errors import (
    FrazilError,
    FrazilIOError,
    InvalidValueError,
    MissingDependencyError,
    NotAuthorizedError,
    ValidationError,
)

if TYPE_CHECKING:
    from frazil.catalog.rest._http import HttpClient

__all__ = ["BearerAuth", "OAuth2Auth", "SigV4Auth", "auth_for", "token_endpoint"]

TOKEN = "token"
CREDENTIAL = "credential"
OAUTH2_SERVER_URI = "oauth2-server-uri"
SCOPE = "scope"
CATALOG_SCOPE = "catalog"
TOKEN_REFRESH_ENABLED = "token-refresh-enabled"
TOKEN_EXCHANGE_ENABLED = "token-exchange-enabled"
TOKEN_EXPIRES_IN_MS = "token-expires-in-ms"
SIGV4_ENABLED = "rest.sigv4-enabled"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"
_MAX_REFRESH_WINDOW_S = 300.0
# The properties that decide how requests are authenticated: equal values, same session.
AUTH_KEYS = (
    TOKEN,
    CREDENTIAL,
    OAUTH2_SERVER_URI,
    SCOPE,
    "audience",
    "resource",
    TOKEN_REFRESH_ENABLED,
    TOKEN_EXCHANGE_ENABLED,
    TOKEN_EXPIRES_IN_MS,
    SIGV4_ENABLED,
    "rest.signing-region",
    "rest.signing-name",
    "rest.access-key-id",
    "rest.secret-access-key",
    "rest.session-token",
    "client.access-key-id",
    "client.secret-access-key",
    "client.session-token",
    "client.region",
)


def token_endpoint(properties: Mapping[str, str]) -> str:
    """Where client credentials are exchanged for a token: ``oauth2-server-uri``, else the
    spec's deprecated ``<uri>/v1/oauth/tokens``."""
    explicit = properties.get(OAUTH2_SERVER_URI)
    if explicit:
        return explicit
    return properties["uri"].rstrip("/") + "/v1/oauth/tokens"


class BearerAuth(Auth):
    """A fixed bearer token (``token`` without a way to renew it)."""

    def __init__(self, token: str) -> None:
        self._token = token

    def apply(self, request: Request) -> None:
        # A request's own token (a table's, from its load config) wins over the catalog's.
        request.headers.setdefault("Authorization", f"Bearer {self._token}")


def jwt_expiry(token: str) -> float | None:
    """The ``exp`` claim (seconds since the epoch) of a JWT; None for another kind of token
    (Java's ``OAuth2Util.expiresAtMillis`` reads it the same way, without verifying)."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        payload = parts[1] + "=" * (-len(parts[1]) % 4)
        claims = json.loads(base64.urlsafe_b64decode(payload.encode("ascii")))
    except (ValueError, UnicodeError):
        return None
    exp = claims.get("exp") if isinstance(claims, dict) else None
    return float(exp) if isinstance(exp, int | float) and not isinstance(exp, bool) else None


@dataclass
class _Token:
    value: str
    issued_at: float
    expires_at: float | None

    def due(self, now: float) -> bool:
        """Whether the token is in its refresh window (or past its expiry)."""
        if self.expires_at is None:
            return False
        window = min((self.expires_at - self.issued_at) / 10, _MAX_REFRESH_WINDOW_S)
        return now >= self.expires_at - window


def _oauth_error(response: Response, endpoint: str) -> Exception:
    """An OAuth2 error answer (RFC 6749 5.2: ``error``, ``error_description``) as frazil's
    (Java's ``OAuthErrorHandler``: ``invalid_client`` is NotAuthorizedError, the other codes
    BadRequestError); an answer without that body goes by its status."""
    from frazil.catalog.rest.protocol import OAuthError

    prefix = f"OAuth2 token request to {endpoint} failed with {response.status}"
    try:
        error = OAuthError.from_json(response.json()).to_error()
    except FrazilError:
        text = response.body.decode("utf-8", errors="replace").strip()[:300]
        if response.status in (401, 403):
            return NotAuthorizedError(f"{prefix}: {text}")
        return FrazilIOError(f"{prefix}: {text}")
    return type(error)(f"{prefix}: {error}")


class OAuth2Auth(Auth):
    """A bearer token from the OAuth2 flows of the module docs, renewed before it expires."""

    def __init__(
        self,
        properties: Mapping[str, str],
        client: HttpClient,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._client = client
        self._clock = clock
        self._endpoint = token_endpoint(properties)
        self._credential = properties.get(CREDENTIAL) or None
        self._scope = properties.get(SCOPE) or CATALOG_SCOPE
        self._extra = {k: properties[k] for k in ("audience", "resource") if properties.get(k)}
        self._refresh_enabled = _bool_property(properties, TOKEN_REFRESH_ENABLED, True)
        self._exchange_enabled = _bool_property(properties, TOKEN_EXCHANGE_ENABLED, True)
        self._default_life_s = _int_property(properties, TOKEN_EXPIRES_IN_MS, 3_600_000, 1) / 1000
        self._lock = threading.Lock()
        initial = properties.get(TOKEN)
        if initial:
            now = clock()
            self._token: _Token | None = _Token(initial, now, jwt_expiry(initial))
        elif self._credential:
            self._token = self._fetch()
        else:
            raise ValidationError("OAuth2 needs a 'token' or a 'credential' property")

    @property
    def token(self) -> str | None:
        return None if self._token is None else self._token.value

    def _post(self, form: dict[str, str], bearer: str | None) -> _Token:
        headers = {"Authorization": f"Bearer {bearer}"} if bearer else {}
        issued = self._clock()
        response = self._client.request(
            "POST", self._endpoint, form=form, headers=headers, authenticate=False
        )
        if not response.ok:
            raise _oauth_error(response, self._endpoint)
        body = response.json()
        token = body.get("access_token") if isinstance(body, dict) else None
        if not isinstance(token, str) or not token:
            raise InvalidValueError(
                f"OAuth2 token response of {self._endpoint} has no access_token: "
                f"{response.body[:200]!r}"
            )
        token_type = body.get("token_type")
        if isinstance(token_type, str) and token_type.lower() not in ("bearer", "n_a"):
            # RFC 6749 7.1: only bearer tokens can be sent as this client sends them.
            raise InvalidValueError(
                f"OAuth2 token response of {self._endpoint} has token_type {token_type!r}: "
                "only Bearer tokens are supported"
            )
        expires_in = body.get("expires_in")
        if isinstance(expires_in, int | float) and not isinstance(expires_in, bool):
            expires_at: float | None = issued + float(expires_in)
        else:
            expires_at = jwt_expiry(token)
            if expires_at is None and self._credential:
                expires_at = issued + self._default_life_s
        return _Token(token, issued, expires_at)

    def _fetch(self) -> _Token:
        """A new token for the credential (client-credentials grant)."""
        assert self._credential is not None
        client_id, sep, secret = self._credential.partition(":")
        form = {"grant_type": "client_credentials"}
        if sep:
            form["client_id"] = client_id
            form["client_secret"] = secret
        else:
            form["client_secret"] = self._credential
        form["scope"] = self._scope
        form.update(self._extra)
        return self._post(form, None)

    def _exchange(self, current: str) -> _Token:
        """The current token renewed by token exchange (RFC 8693), as Java refreshes one."""
        form = {
            "grant_type": TOKEN_EXCHANGE_GRANT,
            "subject_token": current,
            "subject_token_type": ACCESS_TOKEN_TYPE,
            "scope": self._scope,
            **self._extra,
        }
        return self._post(form, current)

    def _renew(self) -> bool:
        current = self._token
        if self._credential:
            self._token = self._fetch()
            return True
        if self._exchange_enabled and current is not None:
            self._token = self._exchange(current.value)
            return True
        return False

    def apply(self, request: Request) -> None:
        token = self._token
        if token is not None and self._refresh_enabled and token.due(self._clock()):
            with self._lock:
                if self._token is token:  # not renewed by another thread meanwhile
                    self._renew()
            token = self._token
        if token is not None:
            # A request's own token (a table's, from its load config) wins over the catalog's.
            request.headers.setdefault("Authorization", f"Bearer {token.value}")

    def refresh(self) -> bool:
        if not self._credential:
            return False  # a fixed or exchanged token the server refused: renewing won't help
        with self._lock:
            self._token = self._fetch()
        return True


class SigV4Auth(Auth):
    """AWS Signature V4 over every request, after ``delegate``'s headers (module docs)."""

    def __init__(self, properties: Mapping[str, str], delegate: Auth) -> None:
        try:
            import botocore.auth
            import botocore.awsrequest
            import botocore.credentials
            import botocore.session
        except ImportError:
            raise MissingDependencyError(
                f"{SIGV4_ENABLED}=true needs botocore: pip install 'frazil[aws]' (or botocore)"
            ) from None
        self._delegate = delegate
        self._service = properties.get("rest.signing-name") or "execute-api"
        key = properties.get("rest.access-key-id") or properties.get("client.access-key-id")
        secret = properties.get("rest.secret-access-key") or properties.get(
            "client.secret-access-key"
        )
        session_token = properties.get("rest.session-token") or properties.get(
            "client.session-token"
        )
        botocore_session: Any = None
        if key and secret:
            self._credentials: Any = botocore.credentials.Credentials(key, secret, session_token)
        elif key or secret:
            raise ValidationError(
                "SigV4 needs both rest.access-key-id and rest.secret-access-key (or neither, "
                "for botocore's credential chain)"
            )
        else:
            botocore_session = botocore.session.get_session()
            self._credentials = botocore_session.get_credentials()
            if self._credentials is None:
                raise NotAuthorizedError(
                    f"{SIGV4_ENABLED}=true but no AWS credentials were found: set "
                    "rest.access-key-id and rest.secret-access-key, or configure botocore's "
                    "credential chain (AWS_ACCESS_KEY_ID, ~/.aws/credentials, ...)"
                )
        region = properties.get("rest.signing-region") or properties.get("client.region")
        if not region:
            botocore_session = botocore_session or botocore.session.get_session()
            region = botocore_session.get_config_variable("region")
        if not region:
            raise ValidationError(
                f"{SIGV4_ENABLED}=true needs a region: set rest.signing-region (or "
                "client.region, or AWS_REGION)"
            )
        self._region = str(region)
        self._auth_module = botocore.auth
        self._request_type = botocore.awsrequest.AWSRequest

    def apply(self, request: Request) -> None:
        self._delegate.apply(request)
        headers = request.headers
        for name in [k for k in headers if k.lower() == "authorization"]:
            headers["Original-Authorization"] = headers.pop(name)
        headers["X-Amz-Content-SHA256"] = hashlib.sha256(request.body).hexdigest()
        aws_request = self._request_type(
            method=request.method, url=request.url, data=request.body, headers=dict(headers)
        )
        credentials = self._credentials
        if hasattr(credentials, "get_frozen_credentials"):
            credentials = credentials.get_frozen_credentials()  # refreshable chains
        self._auth_module.SigV4Auth(credentials, self._service, self._region).add_auth(aws_request)
        request.headers = {str(k): str(v) for k, v in aws_request.headers.items()}

    def refresh(self) -> bool:
        return self._delegate.refresh()


def auth_for(properties: Mapping[str, str], client: HttpClient) -> Auth:
    """The authentication ``properties`` configure (module docs); ``client`` sends token
    requests."""
    auth: Auth
    if properties.get(CREDENTIAL) or (
        properties.get(TOKEN) and _bool_property(properties, TOKEN_REFRESH_ENABLED, True)
    ):
        auth = OAuth2Auth(properties, client)
    elif properties.get(TOKEN):
        auth = BearerAuth(properties[TOKEN])
    else:
        auth = Auth()
    if _bool_property(properties, SIGV4_ENABLED, False):
        auth = SigV4Auth(properties, auth)
    return auth
