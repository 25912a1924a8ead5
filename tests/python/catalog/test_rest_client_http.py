"""The REST client's HTTP layer and authentication (frazil.catalog.rest._http, .auth) against a
scripted loopback server: which answers are retried and how long the client waits, OAuth2
token fetching and renewal, bearer tokens, headers and SigV4 signatures recomputed with
botocore on the server side."""

from __future__ import annotations

import base64
import json
import socket
import threading
from collections.abc import Iterator

import pytest
from frazil.catalog.rest._http import HttpClient, RetryPolicy, retry_after_ms
from frazil.catalog.rest.auth import OAuth2Auth, SigV4Auth, auth_for, jwt_expiry
from frazil.errors import FrazilIOError, LostConnectionError, NotAuthorizedError, ValidationError
from hypothesis import given
from hypothesis import strategies as st
from rest_stub import Answer, Seen, StubServer


def sequence(*answers: Answer) -> tuple[list[Answer], StubServer]:
    queue = list(answers)

    def handler(seen: Seen) -> Answer:
        return queue.pop(0) if queue else Answer(200, {"ok": True})

    return queue, StubServer(handler)


class Sleeps:
    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


def client(server: StubServer, sleeps: Sleeps, **props: str) -> HttpClient:
    return HttpClient({"uri": server.uri, **props}, sleep=sleeps)


@pytest.mark.parametrize("status", [429, 502, 503, 504])
def test_get_retried_until_success(status: int, sleeps: Sleeps) -> None:
    _, server = sequence(Answer(status), Answer(status))
    with server:
        response = client(server, sleeps).request("GET", server.uri + "/v1/config")
    assert response.status == 200 and response.json() == {"ok": True}
    assert len(server.requests) == 3
    # Java's backoff: 1 s, then 2 s, each plus up to 10% jitter.
    assert 1.0 <= sleeps.waits[0] <= 1.1 and 2.0 <= sleeps.waits[1] <= 2.2


def test_retry_after_seconds_honoured(sleeps: Sleeps) -> None:
    _, server = sequence(Answer(503, headers={"Retry-After": "7"}))
    with server:
        assert client(server, sleeps).request("HEAD", server.uri + "/x").status == 200
    assert sleeps.waits == [7.0]


def test_retries_stop_at_max_retries(sleeps: Sleeps) -> None:
    _, server = sequence(*[Answer(503)] * 10)
    with server:
        response = client(server, sleeps, **{"rest.client.max-retries": "2"}).request(
            "GET", server.uri + "/x"
        )
    assert response.status == 503 and len(server.requests) == 3 and len(sleeps.waits) == 2


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_post_never_retried_on_5xx(status: int, sleeps: Sleeps) -> None:
    # A POST may have taken effect: the caller sees the answer (a commit: state unknown).
    _, server = sequence(Answer(status, headers={"Retry-After": "1"}))
    with server:
        response = client(server, sleeps).request("POST", server.uri + "/x", json_body={})
    assert response.status == status and len(server.requests) == 1 and not sleeps.waits


def test_post_retried_on_429(sleeps: Sleeps) -> None:
    # 429: refused before processing (RFC 6585), safe to send again whatever the method.
    _, server = sequence(Answer(429, headers={"Retry-After": "2"}))
    with server:
        response = client(server, sleeps).request("POST", server.uri + "/x", json_body={"a": 1})
    assert response.status == 200 and [r.json() for r in server.requests] == [{"a": 1}] * 2
    assert sleeps.waits == [2.0]


def test_delete_retried_on_503_only_with_retry_after(sleeps: Sleeps) -> None:
    _, server = sequence(Answer(503, headers={"Retry-After": "1"}), Answer(503))
    with server:
        response = client(server, sleeps).request("DELETE", server.uri + "/x")
    assert response.status == 503 and len(server.requests) == 2 and sleeps.waits == [1.0]


def test_connection_refused_is_not_sent(sleeps: Sleeps) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    http = HttpClient({"uri": f"http://127.0.0.1:{port}"}, sleep=sleeps)
    with pytest.raises(FrazilIOError, match="could not connect") as raised:
        http.request("POST", f"http://127.0.0.1:{port}/v1/x", json_body={})
    # Not a lost connection: the server never saw the request.
    assert not isinstance(raised.value, LostConnectionError)
    assert not sleeps.waits


def test_dropped_connection_is_sent_and_retried_for_reads(sleeps: Sleeps) -> None:
    _, server = sequence(Answer(drop=True), Answer(drop=True))
    with server:
        response = client(server, sleeps).request("GET", server.uri + "/x")
        assert response.status == 200 and len(server.requests) == 3
    _, server = sequence(Answer(drop=True))
    with server, pytest.raises(LostConnectionError):
        client(server, sleeps).request("POST", server.uri + "/x", json_body={})
    assert len(server.requests) == 1


def test_socket_timeout_is_sent(sleeps: Sleeps) -> None:
    release = threading.Event()

    def slow(seen: Seen) -> Answer:
        release.wait(5)
        return Answer(200, {})

    with StubServer(slow) as server:
        http = client(server, sleeps, **{"rest.client.socket-timeout-ms": "200"})
        with pytest.raises(LostConnectionError, match=r"rest\.client\.socket-timeout-ms"):
            http.request("POST", server.uri + "/commit", json_body={})
        release.set()


def test_headers_from_properties(sleeps: Sleeps) -> None:
    _, server = sequence()
    with server:
        client(server, sleeps, **{"header.X-Tenant": "t1", "header.User-Agent": "me"}).request(
            "GET", server.uri + "/x", params={"warehouse": "w h"}
        )
    seen = server.requests[0]
    assert seen.headers["X-Tenant"] == "t1" and seen.headers["User-Agent"] == "me"
    assert seen.query == {"warehouse": "w h"}
    assert seen.headers["X-Client-Version"].startswith("frazil ")


@given(st.integers(min_value=1, max_value=10**6))
def test_retry_after_delta_seconds(seconds: int) -> None:
    assert retry_after_ms(str(seconds)) == seconds * 1000


def test_retry_after_http_date_and_garbage() -> None:
    assert retry_after_ms("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10_000
    assert retry_after_ms("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412490.0) is None  # past
    assert retry_after_ms("soon") is None and retry_after_ms(None) is None
    assert retry_after_ms("0") is None  # not positive: Java backs off instead


@given(st.integers(min_value=1, max_value=40))
def test_backoff_is_capped(attempt: int) -> None:
    wait = RetryPolicy(5, 1000).backoff_ms(attempt)
    expected = min(1000 * 2 ** (attempt - 1), 64_000)
    assert expected <= wait <= expected * 1.1


# --- OAuth2 ------------------------------------------------------------------------------------


class TokenServer:
    """A token endpoint handing out numbered tokens, and a resource that accepts only the
    latest one."""

    def __init__(self, expires_in: int | None = 3600) -> None:
        self.issued: list[str] = []
        self.expires_in = expires_in
        self.forms: list[dict[str, str]] = []

    def __call__(self, seen: Seen) -> Answer:
        if seen.path == "/v1/oauth/tokens" or seen.path == "/auth/token":
            form = seen.form()
            self.forms.append(form)
            if form.get("client_secret") == "wrong":
                return Answer(401, {"error": "invalid_client", "error_description": "who?"})
            token = f"tok-{len(self.issued)}"
            self.issued.append(token)
            body: dict[str, object] = {"access_token": token, "token_type": "bearer"}
            if self.expires_in is not None:
                body["expires_in"] = self.expires_in
            return Answer(200, body)
        current = f"Bearer {self.issued[-1]}" if self.issued else None
        if seen.headers.get("Authorization") != current:
            return Answer(401, {"error": {"message": "expired", "type": "NotAuthorizedException"}})
        return Answer(200, {"ok": True})


def test_client_credentials_flow(sleeps: Sleeps) -> None:
    tokens = TokenServer()
    with StubServer(tokens) as server:
        props = {
            "uri": server.uri,
            "credential": "id:se:cret",
            "scope": "catalog extra",
            "audience": "aud",
            "oauth2-server-uri": server.uri + "/auth/token",
        }
        http = HttpClient(props, sleep=sleeps)
        http.auth = auth_for(props, http)
        assert http.request("GET", server.uri + "/v1/x").json() == {"ok": True}
    assert tokens.forms == [
        {
            "grant_type": "client_credentials",
            "client_id": "id",
            "client_secret": "se:cret",
            "scope": "catalog extra",
            "audience": "aud",
        }
    ]
    assert server.requests[0].headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert server.paths() == ["/auth/token", "/v1/x"]


def test_secret_only_credential_and_default_endpoint(sleeps: Sleeps) -> None:
    tokens = TokenServer()
    with StubServer(tokens) as server:
        props = {"uri": server.uri + "/", "credential": "only-secret"}
        http = HttpClient(props, sleep=sleeps)
        http.auth = auth_for(props, http)
    assert tokens.forms == [
        {"grant_type": "client_credentials", "client_secret": "only-secret", "scope": "catalog"}
    ]
    assert server.paths() == ["/v1/oauth/tokens"]


def test_bad_credential_names_the_endpoint(sleeps: Sleeps) -> None:
    with StubServer(TokenServer()) as server:
        props = {"uri": server.uri, "credential": "id:wrong"}
        http = HttpClient(props, sleep=sleeps)
        with pytest.raises(NotAuthorizedError, match="invalid_client: who"):
            auth_for(props, http)


def test_token_renewed_before_expiry(sleeps: Sleeps) -> None:
    tokens = TokenServer(expires_in=100)
    now = [1000.0]
    with StubServer(tokens) as server:
        props = {"uri": server.uri, "credential": "id:secret"}
        http = HttpClient(props, sleep=sleeps)
        auth = OAuth2Auth(props, http, clock=lambda: now[0])
        http.auth = auth
        http.request("GET", server.uri + "/v1/a")
        now[0] = 1089.0  # 11 s left of 100: outside the 10% window
        http.request("GET", server.uri + "/v1/b")
        assert tokens.issued == ["tok-0"]
        now[0] = 1091.0  # inside it: renewed before the request
        assert http.request("GET", server.uri + "/v1/c").status == 200
        assert tokens.issued == ["tok-0", "tok-1"]
        assert server.requests[-1].headers["Authorization"] == "Bearer tok-1"


def test_refused_token_renewed_once(sleeps: Sleeps) -> None:
    tokens = TokenServer(expires_in=None)  # no expiry known: only a 401 shows it is stale

    with StubServer(tokens) as server:
        props = {"uri": server.uri, "credential": "id:secret"}
        http = HttpClient(props, sleep=sleeps)
        http.auth = auth_for(props, http)
        tokens.issued.append("revoked-meanwhile")  # the server now wants a newer token
        response = http.request("GET", server.uri + "/v1/a")
    assert response.status == 200
    assert server.paths() == ["/v1/oauth/tokens", "/v1/a", "/v1/oauth/tokens", "/v1/a"]


def test_fixed_bearer_token(sleeps: Sleeps) -> None:
    _, server = sequence(Answer(401, {"error": {"message": "no", "code": 401}}))
    with server:
        props = {"uri": server.uri, "token": "abc", "token-refresh-enabled": "false"}
        http = HttpClient(props, sleep=sleeps)
        http.auth = auth_for(props, http)
        assert http.request("GET", server.uri + "/v1/a").status == 401  # no refresh possible
    assert server.requests[0].headers["Authorization"] == "Bearer abc"
    assert len(server.requests) == 1


def _jwt(claims: dict[str, object]) -> str:
    def part(obj: object) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none'})}.{part(claims)}.sig"


def test_jwt_expiry() -> None:
    assert jwt_expiry(_jwt({"exp": 1700000000})) == 1700000000.0
    assert jwt_expiry(_jwt({"sub": "x"})) is None
    assert jwt_expiry("opaque") is None and jwt_expiry("a.b.c") is None


def test_token_exchange_renews_an_expiring_jwt(sleeps: Sleeps) -> None:
    token = _jwt({"exp": 2000})
    forms: list[dict[str, str]] = []

    def handler(seen: Seen) -> Answer:
        if seen.path == "/v1/oauth/tokens":
            forms.append(seen.form())
            assert seen.headers["Authorization"] == f"Bearer {token}"
            return Answer(200, {"access_token": "fresh", "token_type": "Bearer"})
        return Answer(200, {})

    with StubServer(handler) as server:
        props = {"uri": server.uri, "token": token}
        http = HttpClient(props, sleep=sleeps)
        now = [1000.0]  # loaded with 1000 s left: renewed in the last 100 s
        http.auth = OAuth2Auth(props, http, clock=lambda: now[0])
        http.request("GET", server.uri + "/v1/a")
        assert not forms
        now[0] = 1950.0
        http.request("GET", server.uri + "/v1/a")
    assert forms == [
        {
            "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
            "subject_token": token,
            "subject_token_type": "urn:ietf:params:oauth:token-type:access_token",
            "scope": "catalog",
        }
    ]
    assert server.requests[-1].headers["Authorization"] == "Bearer fresh"


# --- SigV4 -------------------------------------------------------------------------------------


def _verify_sigv4(seen: Seen, host: str, secret: str) -> bool:
    """Recompute the request's signature with botocore, as an API gateway would."""
    from botocore.auth import SigV4Auth as BotoSigV4
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    authorization = seen.headers["Authorization"]
    assert authorization.startswith("AWS4-HMAC-SHA256 Credential=AKID/")
    fields = dict(
        p.strip().split("=", 1) for p in authorization[len("AWS4-HMAC-SHA256 ") :].split(",")
    )
    _, _, region, service, _ = fields["Credential"].split("/")
    signed = fields["SignedHeaders"].split(";")
    headers = {k: v for k, v in seen.headers.items() if k.lower() in signed}
    request = AWSRequest(
        method=seen.method, url=f"http://{host}{seen.raw_path}", data=seen.body, headers=headers
    )
    request.context["timestamp"] = seen.headers["X-Amz-Date"]
    signer = BotoSigV4(Credentials("AKID", secret, "SESSION"), service, region)
    canonical = signer.canonical_request(request)
    expected = signer.signature(signer.string_to_sign(request, canonical), request)
    return bool(expected == fields["Signature"]) and region == "eu-west-3" and service == "glue"


@pytest.fixture
def signed_server() -> Iterator[tuple[StubServer, list[bool]]]:
    verdicts: list[bool] = []
    holder: list[StubServer] = []

    def handler(seen: Seen) -> Answer:
        host = holder[0].uri.removeprefix("http://")
        verdicts.append(_verify_sigv4(seen, host, "SECRET"))
        return Answer(200, {})

    server = StubServer(handler)
    holder.append(server)
    with server:
        yield server, verdicts


def test_sigv4_signature_verifies(
    sleeps: Sleeps, signed_server: tuple[StubServer, list[bool]]
) -> None:
    server, verdicts = signed_server
    props = {
        "uri": server.uri,
        "rest.sigv4-enabled": "true",
        "rest.signing-region": "eu-west-3",
        "rest.signing-name": "glue",
        "rest.access-key-id": "AKID",
        "rest.secret-access-key": "SECRET",
        "rest.session-token": "SESSION",
        "token": "bearer-too",
        "token-refresh-enabled": "false",
    }
    http = HttpClient(props, sleep=sleeps)
    http.auth = auth_for(props, http)
    assert isinstance(http.auth, SigV4Auth)
    http.request("GET", server.uri + "/v1/namespaces/a%1Fb", params={"pageToken": "x y"})
    http.request("POST", server.uri + "/v1/namespaces", json_body={"namespace": ["ü"]})
    http.request("DELETE", server.uri + "/v1/namespaces/a")
    assert verdicts == [True, True, True]
    first = server.requests[0]
    # The bearer token moved inside the signature, as Java relocates it.
    assert first.headers["Original-Authorization"] == "Bearer bearer-too"
    assert "original-authorization" in first.headers["Authorization"]
    assert first.headers["X-Amz-Security-Token"] == "SESSION"


def test_sigv4_tampered_body_fails_verification(
    sleeps: Sleeps, signed_server: tuple[StubServer, list[bool]]
) -> None:
    server, verdicts = signed_server
    props = {
        "uri": server.uri,
        "rest.sigv4-enabled": "true",
        "rest.signing-region": "eu-west-3",
        "rest.signing-name": "glue",
        "rest.access-key-id": "AKID",
        "rest.secret-access-key": "OTHER-SECRET",
    }
    http = HttpClient(props, sleep=sleeps)
    http.auth = auth_for(props, http)
    http.request("POST", server.uri + "/v1/namespaces", json_body={"namespace": ["a"]})
    assert verdicts == [False]  # the verifier can tell: the check is real


def test_sigv4_needs_a_region(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    props = {
        "uri": "http://127.0.0.1:1",
        "rest.sigv4-enabled": "true",
        "rest.access-key-id": "a",
        "rest.secret-access-key": "b",
    }
    with pytest.raises(ValidationError, match=r"rest\.signing-region"):
        auth_for(props, HttpClient(props))


def test_sigv4_without_botocore(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    from frazil.errors import MissingDependencyError

    real_import = builtins.__import__

    def no_botocore(name: str, *args: object, **kwargs: object) -> object:
        if name.startswith("botocore"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", no_botocore)
    props = {"uri": "http://127.0.0.1:1", "rest.sigv4-enabled": "true"}
    with pytest.raises(MissingDependencyError, match="botocore"):
        auth_for(props, HttpClient(props))
