"""Routes, endpoints and namespaces in URLs (the REST Catalog OpenAPI)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import quote, unquote_plus

from frazil.errors import (
    BadRequestError,
    InvalidMetadataError,
    ValidationError,
)

Identifier = tuple[str, ...]

# --- routes ---------------------------------------------------------------------------------

CONFIG = "/v1/config"
TOKENS = "/v1/oauth/tokens"
NAMESPACES = "/v1/{prefix}/namespaces"
NAMESPACE = "/v1/{prefix}/namespaces/{namespace}"
NAMESPACE_PROPERTIES = "/v1/{prefix}/namespaces/{namespace}/properties"
TABLES = "/v1/{prefix}/namespaces/{namespace}/tables"
TABLE = "/v1/{prefix}/namespaces/{namespace}/tables/{table}"
TABLE_CREDENTIALS = "/v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials"
TABLE_METRICS = "/v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics"
PLAN = "/v1/{prefix}/namespaces/{namespace}/tables/{table}/plan"
PLAN_ID = "/v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}"
TASKS = "/v1/{prefix}/namespaces/{namespace}/tables/{table}/tasks"
REGISTER = "/v1/{prefix}/namespaces/{namespace}/register"
RENAME_TABLE = "/v1/{prefix}/tables/rename"
TRANSACTIONS_COMMIT = "/v1/{prefix}/transactions/commit"
VIEWS = "/v1/{prefix}/namespaces/{namespace}/views"
VIEW = "/v1/{prefix}/namespaces/{namespace}/views/{view}"
RENAME_VIEW = "/v1/{prefix}/views/rename"


@dataclass(frozen=True)
class Endpoint:
    """An HTTP method and a route template, written ``"GET /v1/{prefix}/namespaces"`` (the
    OpenAPI's ``CatalogConfig.endpoints``; Java's ``Endpoint``)."""

    method: str
    path: str

    def __str__(self) -> str:
        return f"{self.method} {self.path}"

    @classmethod
    def parse(cls, text: str) -> Endpoint:
        parts = text.split(" ") if isinstance(text, str) else []
        if len(parts) != 2 or not parts[0] or not parts[1]:
            raise InvalidMetadataError(
                f"invalid endpoint {text!r}: expected '<HTTP method> <path>' separated by one space"
            )
        return cls(parts[0].upper(), parts[1])


LIST_NAMESPACES = Endpoint("GET", NAMESPACES)
LOAD_NAMESPACE = Endpoint("GET", NAMESPACE)
NAMESPACE_EXISTS = Endpoint("HEAD", NAMESPACE)
CREATE_NAMESPACE = Endpoint("POST", NAMESPACES)
UPDATE_NAMESPACE = Endpoint("POST", NAMESPACE_PROPERTIES)
DELETE_NAMESPACE = Endpoint("DELETE", NAMESPACE)
COMMIT_TRANSACTION = Endpoint("POST", TRANSACTIONS_COMMIT)
LIST_TABLES = Endpoint("GET", TABLES)
LOAD_TABLE = Endpoint("GET", TABLE)
TABLE_EXISTS = Endpoint("HEAD", TABLE)
CREATE_TABLE = Endpoint("POST", TABLES)
UPDATE_TABLE = Endpoint("POST", TABLE)
DELETE_TABLE = Endpoint("DELETE", TABLE)
RENAME_TABLE_ENDPOINT = Endpoint("POST", RENAME_TABLE)
REGISTER_TABLE = Endpoint("POST", REGISTER)
REPORT_METRICS = Endpoint("POST", TABLE_METRICS)
TABLE_CREDENTIALS_ENDPOINT = Endpoint("GET", TABLE_CREDENTIALS)
SUBMIT_TABLE_SCAN_PLAN = Endpoint("POST", PLAN)
FETCH_TABLE_SCAN_PLAN = Endpoint("GET", PLAN_ID)
CANCEL_TABLE_SCAN_PLAN = Endpoint("DELETE", PLAN_ID)
FETCH_TABLE_SCAN_PLAN_TASKS = Endpoint("POST", TASKS)
LIST_VIEWS = Endpoint("GET", VIEWS)
LOAD_VIEW = Endpoint("GET", VIEW)
VIEW_EXISTS = Endpoint("HEAD", VIEW)
CREATE_VIEW = Endpoint("POST", VIEWS)
UPDATE_VIEW = Endpoint("POST", VIEW)
DELETE_VIEW = Endpoint("DELETE", VIEW)
RENAME_VIEW_ENDPOINT = Endpoint("POST", RENAME_VIEW)

# What a client assumes when the config response has no `endpoints` (the OpenAPI's getConfig).
DEFAULT_ENDPOINTS: tuple[Endpoint, ...] = (
    LIST_NAMESPACES,
    CREATE_NAMESPACE,
    LOAD_NAMESPACE,
    DELETE_NAMESPACE,
    UPDATE_NAMESPACE,
    LIST_TABLES,
    CREATE_TABLE,
    LOAD_TABLE,
    UPDATE_TABLE,
    DELETE_TABLE,
    REGISTER_TABLE,
    REPORT_METRICS,
    RENAME_TABLE_ENDPOINT,
    COMMIT_TRANSACTION,
)
# Added by Java's client to the defaults when `view-endpoints-supported` is true.
VIEW_ENDPOINTS: tuple[Endpoint, ...] = (
    LIST_VIEWS,
    LOAD_VIEW,
    CREATE_VIEW,
    UPDATE_VIEW,
    DELETE_VIEW,
    RENAME_VIEW_ENDPOINT,
)
# Every endpoint of the document's catalog routes (config and tokens are not endpoints).
ALL_ENDPOINTS: tuple[Endpoint, ...] = (
    *DEFAULT_ENDPOINTS,
    NAMESPACE_EXISTS,
    TABLE_EXISTS,
    TABLE_CREDENTIALS_ENDPOINT,
    SUBMIT_TABLE_SCAN_PLAN,
    FETCH_TABLE_SCAN_PLAN,
    CANCEL_TABLE_SCAN_PLAN,
    FETCH_TABLE_SCAN_PLAN_TASKS,
    *VIEW_ENDPOINTS,
    VIEW_EXISTS,
)

# --- namespaces and names in URLs -----------------------------------------------------------

NAMESPACE_SEPARATOR = "\x1f"
_ESCAPED_SEPARATOR = "%1F"


def encode_string(text: str) -> str:
    """A name as one path segment: every byte but ``A-Za-z0-9_.-~`` percent-encoded (a space
    as ``%20``, ``+`` as ``%2B``, so both decoders below read it back)."""
    return quote(text, safe="")


def decode_string(segment: str) -> str:
    """A path segment as the name it encodes, decoded as Java's ``RESTUtil.decodeString``
    (``URLDecoder``: ``+`` is a space, as Java's client encodes one)."""
    return unquote_plus(segment, errors="strict")


def encode_namespace(namespace: Sequence[str]) -> str:
    """A namespace as one path segment: each level encoded, joined by ``%1F``."""
    levels = tuple(namespace)
    if not levels:
        raise ValidationError("cannot encode an empty namespace in a path")
    return _ESCAPED_SEPARATOR.join(encode_string(level) for level in levels)


def decode_namespace(segment: str) -> Identifier:
    """The namespace of a path segment (still percent-encoded): levels split at ``%1F`` and
    decoded (Java's ``RESTUtil.decodeNamespace``)."""
    try:
        levels = tuple(decode_string(part) for part in re.split("%1[fF]", segment))
    except UnicodeDecodeError:
        raise BadRequestError(f"namespace {segment!r} is not percent-encoded UTF-8") from None
    return tuple(level for part in levels for level in part.split(NAMESPACE_SEPARATOR))


def namespace_param(namespace: Sequence[str]) -> str:
    """A namespace as the ``parent`` query parameter's value: levels joined by the raw unit
    separator (Java and pyiceberg both; the query encoding makes it ``%1F``)."""
    return NAMESPACE_SEPARATOR.join(namespace)


def namespace_from_param(value: str) -> Identifier:
    """The namespace of a (query-decoded) ``parent`` value; empty is the top level."""
    return tuple(value.split(NAMESPACE_SEPARATOR)) if value else ()


def route_path(
    template: str,
    prefix: str | None = None,
    *,
    namespace: Sequence[str] | None = None,
    table: str | None = None,
    view: str | None = None,
    plan_id: str | None = None,
) -> str:
    """``template`` filled in: ``{prefix}`` dropped when there is none (Java's
    ``ResourcePaths``), the namespace and names encoded."""
    values = {
        "{namespace}": None if namespace is None else encode_namespace(namespace),
        "{table}": None if table is None else encode_string(table),
        "{view}": None if view is None else encode_string(view),
        "{plan-id}": None if plan_id is None else encode_string(plan_id),
    }
    segments: list[str] = []
    for segment in template.split("/"):
        if segment == "{prefix}":
            if prefix:
                segments.append(prefix.strip("/"))
        elif segment in values:
            value = values[segment]
            if value is None:
                raise ValidationError(f"route {template} needs a value for {segment}")
            segments.append(value)
        else:
            segments.append(segment)
    return "/".join(segments)
