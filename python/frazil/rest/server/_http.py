"""The request and reply of a route handler (plain data: handlers run in worker threads and
never touch the ASGI machinery)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from frazil.catalog.rest.protocol import dumps
from frazil.errors import BadRequestError

__all__ = ["Call", "Reply", "json_reply"]


@dataclass(frozen=True)
class Call:
    """A matched request: the route's path parameters (raw segments, still percent-encoded,
    so that a name's ``/`` arrives as ``%2F`` and is refused, not routed), the query parameters
    (decoded; a repeated one keeps its last value), the headers (lower-case names) and the
    body."""

    params: Mapping[str, str]
    query: Mapping[str, str]
    headers: Mapping[str, str]
    body: bytes = b""

    def flag(self, name: str, default: bool = False) -> bool:
        """A boolean query parameter (``true``/``false``, any case); anything else is 400."""
        value = self.query.get(name)
        if value is None or value == "":
            return default
        lowered = value.lower()
        if lowered not in ("true", "false"):
            raise BadRequestError(f"query parameter {name} must be true or false, got {value!r}")
        return lowered == "true"


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes | None = None
    headers: Mapping[str, str] = field(default_factory=dict)


NO_CONTENT = Reply(204)


def json_reply(node: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> Reply:
    return Reply(status, dumps(node).encode("utf-8"), headers or {})
