"""The ASGI application of ``frazil serve``: Starlette's request and response on uvicorn.

Web stack, chosen by measurement (benches/bench_rest_stack.py: wrk, 16 connections, one
uvicorn process, 2 cores shared with wrk; requests/second of GET /v1/config and of loading a
table of 20 snapshots from the SQLite catalog):

    this module on Starlette, uvicorn + httptools + uvloop   15.8k   2.0k
    the same, uvicorn's pure-Python h11 + asyncio             5.2k   1.7k
    Starlette's own Router + run_in_threadpool               10.5k   1.9k
    FastAPI, the same handlers as its routes                  7.5k   1.5k

FastAPI's per-route dependency and validation layer costs a third of the load-table rate and
half the config rate, and buys nothing here, where every body is parsed by frazil's protocol
models anyway; uvicorn's C parser and loop triple the cheap routes. A load-table request is
mostly the catalog's pointer lookup (~120 us on SQLite) and the thread hop.

Routing matches the *raw* path (``scope["raw_path"]``), segment by segment, so a name holding
``%2F`` stays one segment and is refused as a name (400) rather than routed elsewhere. Each
handler runs in a worker thread (catalog calls block; ``threads`` of them at once, so
concurrent requests and commits proceed in parallel: no lock is held around a commit here,
the catalog's compare-and-swap decides). Bodies are read up to ``max_body_bytes`` (413 past
it). Every failure is an ``ErrorModel`` body (:mod:`.errors`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from frazil.catalog.rest import protocol as p
from frazil.errors import BadRequestError
from frazil.rest.server._http import Call, Reply, json_reply
from frazil.rest.server.auth import Auth, TokenRefused
from frazil.rest.server.errors import error_reply, model_reply

__all__ = ["RestApp", "Route"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
Handler = Callable[[Call], Reply]

DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True)
class Route:
    """A route: method, OpenAPI template, handler; ``blocking`` handlers run in a thread,
    ``auth`` ones need the bearer token when authentication is on."""

    method: str
    template: str
    handler: Handler
    blocking: bool = True
    auth: bool = True
    body: bool = False

    @property
    def segments(self) -> tuple[str, ...]:
        return tuple(s for s in self.template.split("/")[1:] if s != "{prefix}")


class _TooLarge(Exception):
    """Private control flow: the body passed the limit (answered 413 where it is caught)."""


class RestApp:
    """An ASGI application serving ``routes`` (see :func:`frazil.rest.server.app`)."""

    def __init__(
        self,
        routes: list[Route],
        auth: Auth,
        *,
        prefix: str | None = None,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        threads: int = 32,
        debug: bool = False,
    ) -> None:
        import anyio

        self.auth = auth
        self.max_body_bytes = max_body_bytes
        self.debug = debug
        self._prefix = tuple(prefix.strip("/").split("/")) if prefix else ()
        self._limiter = anyio.CapacityLimiter(threads)
        self._to_thread = anyio.to_thread.run_sync
        # Routes by segment count; the literal segments decide among them.
        self._routes: dict[int, list[tuple[Route, tuple[str, ...]]]] = {}
        for route in routes:
            segments = route.segments
            self._routes.setdefault(len(segments), []).append((route, segments))

    # --- routing ---------------------------------------------------------------------------

    def _match(self, method: str, path: str) -> tuple[Route | None, dict[str, str], list[str]]:
        """The route of ``method`` and the raw ``path``, its parameters, and (when only the
        method is wrong) the methods the path allows."""
        parts = path.split("/")[1:]
        if parts and parts[-1] == "" and len(parts) > 1:
            parts = parts[:-1]  # a trailing slash
        if self._prefix and len(parts) > len(self._prefix) and parts[0] == "v1":
            if tuple(p.decode_string(s) for s in parts[1 : 1 + len(self._prefix)]) == self._prefix:
                parts = [parts[0], *parts[1 + len(self._prefix) :]]
            elif parts[1:2] not in (["config"], ["oauth"]):
                return None, {}, []
        allowed: list[str] = []
        for route, segments in self._routes.get(len(parts), ()):
            params: dict[str, str] = {}
            for template, segment in zip(segments, parts, strict=True):
                if template.startswith("{"):
                    if not segment:
                        break
                    params[template[1:-1]] = segment
                elif template != segment:
                    break
            else:
                if route.method == method:
                    return route, params, []
                allowed.append(route.method)
        return None, {}, allowed

    # --- ASGI ------------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self._lifespan(receive, send)
            return
        if kind != "http":
            return  # no websockets
        from starlette.requests import Request
        from starlette.responses import Response

        method = scope["method"]
        where = f"{method} {scope.get('path', '')}"
        try:
            reply = await self._serve(Request(scope, receive), scope, method)
        except RecursionError:
            # Input nested deeper than the parsers follow (a schema type thousands deep).
            too_deep = BadRequestError("the request is nested too deeply to be read")
            reply = error_reply(too_deep, where, debug=self.debug)
        except Exception as error:
            reply = error_reply(error, where, debug=self.debug)
        headers = dict(reply.headers)
        body = b"" if reply.body is None or method == "HEAD" else reply.body
        response = Response(
            content=body,
            status_code=reply.status,
            headers=headers,
            media_type="application/json" if reply.body is not None else None,
        )
        await response(scope, receive, send)

    async def _serve(self, request: Any, scope: Scope, method: str) -> Reply:
        raw = scope.get("raw_path") or scope["path"].encode("utf-8")
        try:
            path = raw.decode("utf-8").split("?", 1)[0]
        except UnicodeDecodeError:
            raise BadRequestError("the request path is not UTF-8") from None
        route, params, allowed = self._match(method, path)
        if route is None:
            if allowed:
                model = p.ErrorModel(
                    f"{method} is not allowed on {path} (allowed: {', '.join(sorted(allowed))})",
                    "MethodNotAllowedException",
                    405,
                )
                return model_reply(model, {"Allow": ", ".join(sorted(allowed))})
            model = p.ErrorModel(f"no route {method} {path}", "NotFoundException", 404)
            return model_reply(model)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        if route.auth:
            self.auth.check(headers.get("authorization"))
        try:
            query = dict(
                parse_qsl(
                    scope.get("query_string", b"").decode("latin-1"),
                    keep_blank_values=True,
                    errors="strict",
                )
            )
        except UnicodeDecodeError:
            raise BadRequestError("the query string is not percent-encoded UTF-8") from None
        body = b""
        if route.body:
            try:
                body = await self._read_body(request, headers)
            except _TooLarge:
                model = p.ErrorModel(
                    f"the request body is larger than this server's limit of "
                    f"{self.max_body_bytes} bytes",
                    "RequestEntityTooLargeException",
                    413,
                )
                return model_reply(model, {"Connection": "close"})
        call = Call(params, query, headers, body)
        if route.blocking:
            reply: Reply = await self._to_thread(route.handler, call, limiter=self._limiter)
            return reply
        return route.handler(call)

    async def _read_body(self, request: Any, headers: dict[str, str]) -> bytes:
        length = headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > self.max_body_bytes:
            raise _TooLarge
        chunks = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > self.max_body_bytes:
                raise _TooLarge
            chunks.append(chunk)
        return b"".join(chunks)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return


def token_handler(auth: Auth) -> Handler:
    """The OAuth2 token endpoint: its answers are OAuth's, not ErrorModels (RFC 6749 5.2)."""

    def handle(call: Call) -> Reply:
        result = auth.token(call.body, call.headers.get("authorization"))
        if isinstance(result, TokenRefused):
            return json_reply(result.error.to_json(), result.status, {"Cache-Control": "no-store"})
        return json_reply(result.to_json(), 200, {"Cache-Control": "no-store"})

    return handle
