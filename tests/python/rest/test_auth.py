"""Authentication of frazil's REST server: off by default; a static bearer token; OAuth2
client credentials at /v1/oauth/tokens (form or Basic), token exchange, expiry."""

from __future__ import annotations

import base64
import time
from typing import Any

import pytest
from frazil.catalog.sql import SqlCatalog
from frazil.errors import ValidationError
from frazil.rest.server.auth import Auth, load_clients
from rest_helpers import error_of

TOKENS = "/v1/oauth/tokens"
ROUTES = [
    ("GET", "/v1/namespaces"),
    ("POST", "/v1/namespaces"),
    ("GET", "/v1/namespaces/db/tables/t"),
    ("POST", "/v1/transactions/commit"),
    ("HEAD", "/v1/namespaces/db"),
    ("GET", "/v1/namespaces/db/views"),
]


def test_off_by_default(sql_catalog: SqlCatalog, make_client: Any) -> None:
    client = make_client(sql_catalog)
    assert client.get("/v1/namespaces").status_code == 200
    form = {"grant_type": "client_credentials", "client_id": "a", "client_secret": "b"}
    refused = client.post(TOKENS, data=form)
    assert refused.status_code == 401
    assert refused.json()["error"] == "invalid_client"
    assert "no token is needed" in refused.json()["error_description"]


def test_static_token(sql_catalog: SqlCatalog, make_client: Any) -> None:
    client = make_client(sql_catalog, token="s3cret")
    assert client.get("/v1/config").status_code == 200  # config needs no token
    for method, path in ROUTES:
        response = client.request(method, path, json={})
        if method == "HEAD":
            assert response.status_code == 401
            continue
        error_of(response, 401, "NotAuthorizedException")
        assert response.headers["www-authenticate"].startswith("Bearer")
    for header in ("Bearer wrong", "Basic czNjcmV0", "s3cret", "Bearer "):
        error_of(client.get("/v1/namespaces", headers={"Authorization": header}), 401)
    ok = client.get("/v1/namespaces", headers={"Authorization": "Bearer s3cret"})
    assert ok.status_code == 200


def test_client_credentials_and_refresh(sql_catalog: SqlCatalog, make_client: Any) -> None:
    client = make_client(sql_catalog, clients={"spark": "pw"})
    form = {
        "grant_type": "client_credentials",
        "client_id": "spark",
        "client_secret": "pw",
        "scope": "catalog",
    }
    granted = client.post(TOKENS, data=form)
    assert granted.status_code == 200, granted.text
    body = granted.json()
    assert body["token_type"] == "bearer" and body["expires_in"] == 3600
    assert body["issued_token_type"] == "urn:ietf:params:oauth:token-type:access_token"
    token = body["access_token"]
    auth = {"Authorization": f"Bearer {token}"}
    assert client.get("/v1/namespaces", headers=auth).status_code == 200
    # The id and secret in a Basic header (RFC 6749 2.3.1).
    basic = base64.b64encode(b"spark:pw").decode()
    by_header = client.post(
        TOKENS,
        data={"grant_type": "client_credentials"},
        headers={"Authorization": f"Basic {basic}"},
    )
    assert by_header.status_code == 200
    # Refresh by token exchange of the current token.
    exchange = {
        "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
        "subject_token": token,
        "subject_token_type": "urn:ietf:params:oauth:token-type:access_token",
    }
    refreshed = client.post(TOKENS, data=exchange, headers=auth)
    assert refreshed.status_code == 200
    new = refreshed.json()["access_token"]
    assert new != token
    assert (
        client.get("/v1/namespaces", headers={"Authorization": f"Bearer {new}"}).status_code == 200
    )
    # Refusals are OAuth error bodies.
    wrong = client.post(TOKENS, data={**form, "client_secret": "nope"})
    assert wrong.status_code == 401 and wrong.json()["error"] == "invalid_client"
    unknown = client.post(TOKENS, data={**form, "client_id": "other"})
    assert unknown.status_code == 401
    bad = client.post(TOKENS, data={**exchange, "subject_token": "forged"})
    assert bad.status_code == 400 and bad.json()["error"] == "invalid_grant"
    grant = client.post(TOKENS, data={"grant_type": "password"})
    assert grant.status_code == 400 and grant.json()["error"] == "unsupported_grant_type"
    assert client.post(TOKENS, content=b"%%%").status_code == 400


def test_issued_tokens_expire(monkeypatch: pytest.MonkeyPatch) -> None:
    auth = Auth(clients={"a": "b"}, token_ttl_s=10)
    issued = auth.token(b"grant_type=client_credentials&client_id=a&client_secret=b", None)
    token = issued.access_token  # type: ignore[union-attr]
    assert auth.valid(token)
    now = time.monotonic()
    monkeypatch.setattr(time, "monotonic", lambda: now + 11)
    assert not auth.valid(token)
    with pytest.raises(Exception, match="unknown or expired"):
        auth.check(f"Bearer {token}")


def test_clients_file(tmp_path: Any) -> None:
    path = tmp_path / "clients.yaml"
    path.write_text("spark: pw\nduck: quack\n")
    assert load_clients(path) == {"spark": "pw", "duck": "quack"}
    path.write_text("- just a list\n")
    with pytest.raises(ValidationError, match="must map client ids"):
        load_clients(path)
    with pytest.raises(ValidationError, match="cannot read"):
        load_clients(tmp_path / "missing.yaml")
