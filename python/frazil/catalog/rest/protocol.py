"""What the REST catalog client and server share (the Iceberg REST Catalog OpenAPI,
``open-api/rest-catalog-open-api.yaml`` of Apache Iceberg 1.10.2; Java's ``org.apache.iceberg.rest``
is the referee where the document is loose).

* Routes and endpoints: the path templates as the OpenAPI spells them (``NAMESPACES`` is
  ``/v1/{prefix}/namespaces``), :class:`Endpoint` (``"GET /v1/{prefix}/namespaces"``, the strings
  of ``ConfigResponse.endpoints``) and :func:`route_path`, which fills a template in.
* Namespaces in paths: levels percent-encoded and joined by ``%1F`` (the unit separator 0x1F);
  in the ``parent`` query parameter joined by the raw separator (the HTTP client encodes it).
* The error model both ways: :class:`ErrorModel` (``{"error": {"message", "type", "code",
  "stack"}}``), :func:`error_model` (a frazil error to its type and HTTP status, for the
  server) and :func:`error_from_model` (back to the frazil error, for the client).
* The JSON bodies, one small dataclass each with ``to_json()`` and ``from_json(node)``; a bad
  field is an :class:`~frazil.errors.InvalidMetadataError` naming it (HTTP 400 on the server).
  Table updates and requirements are :mod:`frazil.table.updates` and
  :mod:`frazil.table.requirements`, view updates :mod:`frazil.table.view_updates`: never
  modelled twice.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import parse_qsl, quote, unquote_plus, urlencode

from frazil import _jsonutil as js
from frazil.errors import (
    AlreadyExistsError,
    BadRequestError,
    CommitFailedError,
    CommitStateUnknownError,
    CommitValidationError,
    ForbiddenError,
    FrazilError,
    FrazilIOError,
    FrazilTypeError,
    InvalidDataError,
    InvalidMetadataError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchPlanIdError,
    NoSuchPlanTaskError,
    NoSuchTableError,
    NoSuchViewError,
    NotAuthorizedError,
    NotFoundError,
    ServiceFailureError,
    ServiceUnavailableError,
    TableAlreadyExistsError,
    UnsupportedOperationError,
    ValidationError,
    ViewAlreadyExistsError,
)
from frazil.metadata import TableMetadata
from frazil.partitioning import PartitionSpec
from frazil.schema import Schema
from frazil.sorting import SortOrder
from frazil.table.requirements import TableRequirement, requirement_from_json
from frazil.table.updates import (
    AddSchema,
    AssignUUID,
    RemoveProperties,
    SetLocation,
    SetProperties,
    TableUpdate,
    UpgradeFormatVersion,
    update_from_json,
)
from frazil.table.view_updates import AddViewVersion, AssertViewUUID, SetCurrentViewVersion
from frazil.view import ViewMetadata, ViewVersion

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


# --- the error model ------------------------------------------------------------------------


@dataclass(frozen=True)
class ErrorModel:
    """The body of every error response: ``{"error": {"message", "type", "code", "stack"}}``."""

    message: str
    type: str
    code: int
    stack: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        error: dict[str, Any] = {"message": self.message, "type": self.type, "code": self.code}
        if self.stack:
            error["stack"] = list(self.stack)
        return {"error": error}

    @classmethod
    def from_json(cls, node: Any) -> ErrorModel:
        outer = js.as_object(node, "error response")
        obj = js.as_object(outer.get("error"), "error response field 'error'")
        what = "error model"
        code = js.get_int(obj, "code", what)
        stack = js.get_str_list(obj, "stack", what) if obj.get("stack") is not None else ()
        return cls(js.get_str(obj, "message", what), js.get_str(obj, "type", what), code, stack)


# Server side: a frazil error's Java exception type and HTTP status, most specific class first
# (the OpenAPI's responses; Java's RESTCatalogAdapter maps its exceptions the same way).
_ERROR_TYPES: tuple[tuple[type[BaseException], str, int], ...] = (
    (NoSuchTableError, "NoSuchTableException", 404),
    (NoSuchViewError, "NoSuchViewException", 404),
    (NoSuchNamespaceError, "NoSuchNamespaceException", 404),
    (NoSuchPlanIdError, "NoSuchPlanIdException", 404),
    (NoSuchPlanTaskError, "NoSuchPlanTaskException", 404),
    (NotFoundError, "NotFoundException", 404),
    (AlreadyExistsError, "AlreadyExistsException", 409),
    (NamespaceNotEmptyError, "NamespaceNotEmptyException", 409),
    (CommitFailedError, "CommitFailedException", 409),
    (CommitStateUnknownError, "CommitStateUnknownException", 500),
    (CommitValidationError, "ValidationException", 400),
    (NotAuthorizedError, "NotAuthorizedException", 401),
    (ForbiddenError, "ForbiddenException", 403),
    (UnsupportedOperationError, "UnsupportedOperationException", 406),
    (ServiceUnavailableError, "ServiceUnavailableException", 503),
    (ValidationError, "BadRequestException", 400),
    (FrazilTypeError, "BadRequestException", 400),
    # Unreadable input (a register of a file that is not metadata): the request's fault.
    (InvalidDataError, "BadRequestException", 400),
    (ServiceFailureError, "ServiceFailureException", 500),
    (FrazilIOError, "ServiceFailureException", 500),
)


def error_model(
    error: BaseException, *, message: str | None = None, stack: Sequence[str] = ()
) -> ErrorModel:
    """The ErrorModel a server answers ``error`` with: its type and status per the OpenAPI
    (any error outside the table above is a 500 ``InternalServerError``)."""
    text = str(error) if message is None else message
    for cls, type_name, code in _ERROR_TYPES:
        if isinstance(error, cls):
            return ErrorModel(text, type_name, code, tuple(stack))
    return ErrorModel(text or type(error).__name__, "InternalServerError", 500, tuple(stack))


ErrorContext = Literal[
    "default", "namespace", "drop-namespace", "table", "create-table", "commit", "view",
    "view-commit", "plan",
]  # fmt: skip

# Client side: the error a type name stands for, whatever the route.
_TYPE_ERRORS: dict[str, type[FrazilError]] = {
    "NoSuchTableException": NoSuchTableError,
    "NoSuchViewException": NoSuchViewError,
    "NoSuchNamespaceException": NoSuchNamespaceError,
    "NoSuchPlanIdException": NoSuchPlanIdError,
    "NoSuchPlanTaskException": NoSuchPlanTaskError,
    "NotFoundException": NotFoundError,
    "NamespaceNotEmptyException": NamespaceNotEmptyError,
    "CommitFailedException": CommitFailedError,
    "CommitStateUnknownException": CommitStateUnknownError,
    "ValidationException": CommitValidationError,
    "NotAuthorizedException": NotAuthorizedError,
    "AuthenticationTimeoutException": NotAuthorizedError,
    "ForbiddenException": ForbiddenError,
    "UnsupportedOperationException": UnsupportedOperationError,
    "ServiceUnavailableException": ServiceUnavailableError,
    "ServiceFailureException": ServiceFailureError,
    "BadRequestException": BadRequestError,
    "IllegalArgumentException": BadRequestError,
}
_ALREADY_EXISTS: dict[str, type[AlreadyExistsError]] = {
    "namespace": NamespaceAlreadyExistsError,
    "table": TableAlreadyExistsError,
    "create-table": TableAlreadyExistsError,
    "view": ViewAlreadyExistsError,
}
_NOT_FOUND: dict[str, type[NotFoundError]] = {
    "namespace": NoSuchNamespaceError,
    "drop-namespace": NoSuchNamespaceError,
    "table": NoSuchTableError,
    "create-table": NoSuchNamespaceError,
    "commit": NoSuchTableError,
    "plan": NoSuchTableError,
    "view": NoSuchViewError,
    "view-commit": NoSuchViewError,
}


def error_from_model(model: ErrorModel, context: ErrorContext = "default") -> FrazilError:
    """The frazil error a client raises for an error response, as Java's ``ErrorHandlers``
    decide: in a commit (``commit``, ``view-commit``) any 500, 502, 503 or 504 leaves the
    commit's outcome unknown (CommitStateUnknownError) and a 409 is CommitFailedError; else
    the type name decides, then the status within the route's ``context`` (a 404 of a table
    route is NoSuchTableError, a 409 of a namespace route NamespaceAlreadyExistsError)."""
    message = model.message
    commit = context in ("commit", "view-commit")
    if commit and model.code in (500, 502, 503, 504):
        return CommitStateUnknownError(
            f"the REST catalog failed during the commit ({model.code} {model.type}: {message}); "
            "the commit may or may not have landed: refresh to find out"
        )
    if context == "drop-namespace" and model.code == 409:
        return NamespaceNotEmptyError(message)
    if model.type == "AlreadyExistsException":
        return _ALREADY_EXISTS.get(context, AlreadyExistsError)(message)
    known = _TYPE_ERRORS.get(model.type)
    if known is not None:
        return known(message)
    code = model.code
    if code == 409:
        if commit:
            return CommitFailedError(message)
        return _ALREADY_EXISTS.get(context, AlreadyExistsError)(message)
    if code == 404:
        return _NOT_FOUND.get(context, NotFoundError)(message)
    if code in (401, 419):
        return NotAuthorizedError(message)
    if code == 403:
        return ForbiddenError(message)
    if code in (405, 406, 501):
        return UnsupportedOperationError(message)
    if code == 503:
        return ServiceUnavailableError(message)
    if 400 <= code < 500:
        return BadRequestError(f"{message} ({code} {model.type})")
    return ServiceFailureError(f"{message} ({code} {model.type})")


def read_json(body: bytes | str, what: str) -> Any:
    """A request body parsed as JSON; malformed JSON is a BadRequestError naming ``what``."""
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError) as error:
        raise BadRequestError(f"malformed {what}: not valid JSON ({error})") from None
    except RecursionError:
        raise BadRequestError(f"malformed {what}: JSON nested too deeply") from None


def dumps(node: Any) -> str:
    """Compact JSON text, non-ASCII kept as UTF-8 (as Java's Jackson writes)."""
    return json.dumps(node, separators=(",", ":"), ensure_ascii=False)


# --- shared pieces of the bodies ------------------------------------------------------------


def _namespace(node: Any, what: str) -> Identifier:
    levels = js.as_list(node, f"{what} namespace")
    return tuple(js.check_str(level, "namespace", what) for level in levels)


def _opt_bool(obj: js.JsonObject, key: str, what: str, default: bool) -> bool:
    return default if obj.get(key) is None else js.get_bool(obj, key, what)


def identifier_to_json(identifier: Sequence[str]) -> dict[str, Any]:
    """A table or view identifier as ``TableIdentifier`` (``{"namespace": [...], "name"}``)."""
    ident = tuple(identifier)
    return {"namespace": list(ident[:-1]), "name": ident[-1]}


def identifier_from_json(node: Any, what: str = "table identifier") -> Identifier:
    obj = js.as_object(node, what)
    if obj.get("namespace") is None:
        raise InvalidMetadataError(f"{what} is missing required field 'namespace'")
    return (*_namespace(obj["namespace"], what), js.get_str(obj, "name", what))


def _str_map(obj: js.JsonObject, key: str, what: str) -> dict[str, str]:
    return js.opt_str_map(obj, key, what) or {}


# --- config and namespaces ------------------------------------------------------------------


@dataclass(frozen=True)
class ConfigResponse:
    defaults: Mapping[str, str] = field(default_factory=dict)
    overrides: Mapping[str, str] = field(default_factory=dict)
    endpoints: tuple[Endpoint, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"defaults": dict(self.defaults), "overrides": dict(self.overrides)}
        if self.endpoints is not None:
            out["endpoints"] = [str(e) for e in self.endpoints]
        return out

    @classmethod
    def from_json(cls, node: Any) -> ConfigResponse:
        what = "config response"
        obj = js.as_object(node, what)
        endpoints = None
        if obj.get("endpoints") is not None:
            endpoints = tuple(Endpoint.parse(e) for e in js.get_str_list(obj, "endpoints", what))
        return cls(_str_map(obj, "defaults", what), _str_map(obj, "overrides", what), endpoints)


@dataclass(frozen=True)
class CreateNamespaceRequest:
    namespace: Identifier
    properties: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"namespace": list(self.namespace), "properties": dict(self.properties)}

    @classmethod
    def from_json(cls, node: Any) -> CreateNamespaceRequest:
        what = "create namespace request"
        obj = js.as_object(node, what)
        if obj.get("namespace") is None:
            raise InvalidMetadataError(f"{what} is missing required field 'namespace'")
        return cls(_namespace(obj["namespace"], what), _str_map(obj, "properties", what))


@dataclass(frozen=True)
class NamespaceResponse:
    """``CreateNamespaceResponse`` and ``GetNamespaceResponse``: a namespace and its
    properties (None: the server stores no properties)."""

    namespace: Identifier
    properties: Mapping[str, str] | None = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        props = None if self.properties is None else dict(self.properties)
        return {"namespace": list(self.namespace), "properties": props}

    @classmethod
    def from_json(cls, node: Any) -> NamespaceResponse:
        what = "namespace response"
        obj = js.as_object(node, what)
        if obj.get("namespace") is None:
            raise InvalidMetadataError(f"{what} is missing required field 'namespace'")
        return cls(_namespace(obj["namespace"], what), js.opt_str_map(obj, "properties", what))


@dataclass(frozen=True)
class ListNamespacesResponse:
    namespaces: tuple[Identifier, ...]
    next_page_token: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "namespaces": [list(ns) for ns in self.namespaces],
            "next-page-token": self.next_page_token,
        }

    @classmethod
    def from_json(cls, node: Any) -> ListNamespacesResponse:
        what = "list namespaces response"
        obj = js.as_object(node, what)
        items = js.get_list(obj, "namespaces", what) if obj.get("namespaces") is not None else []
        return cls(
            tuple(_namespace(ns, what) for ns in items), js.opt_str(obj, "next-page-token", what)
        )


@dataclass(frozen=True)
class UpdateNamespacePropertiesRequest:
    removals: tuple[str, ...] = ()
    updates: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        both = sorted(set(self.removals) & set(self.updates))
        if both:
            raise ValidationError(
                f"invalid namespace properties update: keys {both} are both removed and set"
            )

    def to_json(self) -> dict[str, Any]:
        return {"removals": list(self.removals), "updates": dict(self.updates)}

    @classmethod
    def from_json(cls, node: Any) -> UpdateNamespacePropertiesRequest:
        what = "update namespace properties request"
        obj = js.as_object(node, what)
        removals = js.get_str_list(obj, "removals", what) if obj.get("removals") is not None else ()
        return cls(tuple(dict.fromkeys(removals)), _str_map(obj, "updates", what))


@dataclass(frozen=True)
class UpdateNamespacePropertiesResponse:
    updated: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    missing: tuple[str, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        missing = None if self.missing is None else list(self.missing)
        return {"updated": list(self.updated), "removed": list(self.removed), "missing": missing}

    @classmethod
    def from_json(cls, node: Any) -> UpdateNamespacePropertiesResponse:
        what = "update namespace properties response"
        obj = js.as_object(node, what)
        missing = js.get_str_list(obj, "missing", what) if obj.get("missing") is not None else None
        return cls(
            js.get_str_list(obj, "updated", what), js.get_str_list(obj, "removed", what), missing
        )


@dataclass(frozen=True)
class ListTablesResponse:
    """The identifiers of tables (or views) in a namespace, one page of them."""

    identifiers: tuple[Identifier, ...]
    next_page_token: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "identifiers": [identifier_to_json(i) for i in self.identifiers],
            "next-page-token": self.next_page_token,
        }

    @classmethod
    def from_json(cls, node: Any) -> ListTablesResponse:
        what = "list tables response"
        obj = js.as_object(node, what)
        items = js.get_list(obj, "identifiers", what) if obj.get("identifiers") is not None else []
        return cls(
            tuple(identifier_from_json(i, f"{what} identifier") for i in items),
            js.opt_str(obj, "next-page-token", what),
        )


# --- tables ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class CreateTableRequest:
    name: str
    schema: Schema
    location: str | None = None
    partition_spec: PartitionSpec | None = None
    write_order: SortOrder | None = None
    stage_create: bool = False
    properties: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "schema": self.schema.to_json()}
        if self.location is not None:
            out["location"] = self.location
        if self.partition_spec is not None:
            out["partition-spec"] = self.partition_spec.to_json()
        if self.write_order is not None:
            out["write-order"] = self.write_order.to_json()
        out["stage-create"] = self.stage_create
        out["properties"] = dict(self.properties)
        return out

    @classmethod
    def from_json(cls, node: Any) -> CreateTableRequest:
        what = "create table request"
        obj = js.as_object(node, what)
        if obj.get("schema") is None:
            raise InvalidMetadataError(f"{what} is missing required field 'schema'")
        spec = None
        if obj.get("partition-spec") is not None:
            spec_obj = js.as_object(obj["partition-spec"], f"{what} partition-spec")
            # The request's spec may be unbound (no spec-id); it becomes the table's spec 0.
            spec_id = js.opt_int(spec_obj, "spec-id", f"{what} partition-spec")
            fields = js.get_list(spec_obj, "fields", f"{what} partition-spec")
            spec = PartitionSpec.from_json_fields(fields, 0 if spec_id is None else spec_id)
        order = None
        if obj.get("write-order") is not None:
            order = SortOrder.from_json(obj["write-order"])
        return cls(
            name=js.get_str(obj, "name", what),
            schema=Schema.from_json(obj["schema"]),
            location=js.opt_str(obj, "location", what),
            partition_spec=spec,
            write_order=order,
            stage_create=_opt_bool(obj, "stage-create", what, False),
            properties=_str_map(obj, "properties", what),
        )


@dataclass(frozen=True)
class StorageCredential:
    prefix: str
    config: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"prefix": self.prefix, "config": dict(self.config)}

    @classmethod
    def from_json(cls, node: Any) -> StorageCredential:
        what = "storage credential"
        obj = js.as_object(node, what)
        return cls(js.get_str(obj, "prefix", what), js.get_str_map(obj, "config", what))


def _credentials(obj: js.JsonObject, what: str) -> tuple[StorageCredential, ...]:
    if obj.get("storage-credentials") is None:
        return ()
    items = js.get_list(obj, "storage-credentials", what)
    return tuple(StorageCredential.from_json(c) for c in items)


@dataclass(frozen=True)
class LoadTableResult:
    """A table's metadata, the file it is in (None: staged, not committed), the table's
    configuration (FileIO properties, a ``token``) and storage credentials."""

    metadata: TableMetadata
    metadata_location: str | None = None
    config: Mapping[str, str] = field(default_factory=dict)
    storage_credentials: tuple[StorageCredential, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "metadata-location": self.metadata_location,
            "metadata": self.metadata.to_dict(),
            "config": dict(self.config),
        }
        if self.storage_credentials:
            out["storage-credentials"] = [c.to_json() for c in self.storage_credentials]
        return out

    @classmethod
    def from_json(cls, node: Any) -> LoadTableResult:
        what = "load table result"
        obj = js.as_object(node, what)
        if obj.get("metadata") is None:
            raise InvalidMetadataError(f"{what} is missing required field 'metadata'")
        location = js.opt_str(obj, "metadata-location", what)
        return cls(
            TableMetadata.from_json(js.as_object(obj["metadata"], f"{what} metadata"), location),
            location,
            _str_map(obj, "config", what),
            _credentials(obj, what),
        )


@dataclass(frozen=True)
class LoadCredentialsResponse:
    storage_credentials: tuple[StorageCredential, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"storage-credentials": [c.to_json() for c in self.storage_credentials]}

    @classmethod
    def from_json(cls, node: Any) -> LoadCredentialsResponse:
        what = "load credentials response"
        obj = js.as_object(node, what)
        js.get_list(obj, "storage-credentials", what)
        return cls(_credentials(obj, what))


_VIEW_ONLY_UPDATES = (AddViewVersion, SetCurrentViewVersion)
_VIEW_UPDATES = (
    AssignUUID,
    UpgradeFormatVersion,
    AddSchema,
    SetLocation,
    SetProperties,
    RemoveProperties,
    AddViewVersion,
    SetCurrentViewVersion,
)


def _updates(obj: js.JsonObject, what: str, *, view: bool) -> tuple[TableUpdate, ...]:
    out = []
    for node in js.get_list(obj, "updates", what):
        update = update_from_json(node)
        if view and not isinstance(update, _VIEW_UPDATES):
            raise InvalidMetadataError(f"{what}: {update.action!r} is not a view update")
        if not view and isinstance(update, _VIEW_ONLY_UPDATES):
            raise InvalidMetadataError(f"{what}: {update.action!r} is a view update, not a table's")
        out.append(update)
    return tuple(out)


def _opt_identifier(obj: js.JsonObject, what: str) -> Identifier | None:
    node = obj.get("identifier")
    return None if node is None else identifier_from_json(node, f"{what} identifier")


@dataclass(frozen=True)
class CommitTableRequest:
    """Requirements and updates of one table's commit (``identifier`` required inside a
    transaction, optional on the table's own route)."""

    requirements: tuple[TableRequirement, ...]
    updates: tuple[TableUpdate, ...]
    identifier: Identifier | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.identifier is not None:
            out["identifier"] = identifier_to_json(self.identifier)
        out["requirements"] = [r.to_json() for r in self.requirements]
        out["updates"] = [u.to_json() for u in self.updates]
        return out

    @classmethod
    def from_json(cls, node: Any) -> CommitTableRequest:
        what = "commit table request"
        obj = js.as_object(node, what)
        requirements = tuple(
            requirement_from_json(r) for r in js.get_list(obj, "requirements", what)
        )
        return cls(requirements, _updates(obj, what, view=False), _opt_identifier(obj, what))


@dataclass(frozen=True)
class CommitTableResponse:
    metadata_location: str
    metadata: TableMetadata

    def to_json(self) -> dict[str, Any]:
        return {"metadata-location": self.metadata_location, "metadata": self.metadata.to_dict()}

    @classmethod
    def from_json(cls, node: Any) -> CommitTableResponse:
        what = "commit table response"
        obj = js.as_object(node, what)
        location = js.get_str(obj, "metadata-location", what)
        if obj.get("metadata") is None:
            raise InvalidMetadataError(f"{what} is missing required field 'metadata'")
        metadata = js.as_object(obj["metadata"], f"{what} metadata")
        return cls(location, TableMetadata.from_json(metadata, location))


@dataclass(frozen=True)
class CommitTransactionRequest:
    """Commits to several tables, all or none (each change names its table, once)."""

    table_changes: tuple[CommitTableRequest, ...]

    def __post_init__(self) -> None:
        if not self.table_changes:
            raise ValidationError("invalid transaction: it changes no table")
        seen: set[Identifier] = set()
        for change in self.table_changes:
            if change.identifier is None:
                raise ValidationError("invalid transaction: a table change has no identifier")
            if change.identifier in seen:
                raise ValidationError(
                    f"invalid transaction: table {'.'.join(change.identifier)} is changed twice"
                )
            seen.add(change.identifier)

    def to_json(self) -> dict[str, Any]:
        return {"table-changes": [c.to_json() for c in self.table_changes]}

    @classmethod
    def from_json(cls, node: Any) -> CommitTransactionRequest:
        what = "commit transaction request"
        obj = js.as_object(node, what)
        changes = js.get_list(obj, "table-changes", what)
        return cls(tuple(CommitTableRequest.from_json(c) for c in changes))


@dataclass(frozen=True)
class RegisterTableRequest:
    name: str
    metadata_location: str
    overwrite: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "metadata-location": self.metadata_location}
        if self.overwrite:
            out["overwrite"] = True
        return out

    @classmethod
    def from_json(cls, node: Any) -> RegisterTableRequest:
        what = "register table request"
        obj = js.as_object(node, what)
        return cls(
            js.get_str(obj, "name", what),
            js.get_str(obj, "metadata-location", what),
            _opt_bool(obj, "overwrite", what, False),
        )


@dataclass(frozen=True)
class RenameTableRequest:
    """A table's (or view's) rename."""

    source: Identifier
    destination: Identifier

    def to_json(self) -> dict[str, Any]:
        return {
            "source": identifier_to_json(self.source),
            "destination": identifier_to_json(self.destination),
        }

    @classmethod
    def from_json(cls, node: Any) -> RenameTableRequest:
        what = "rename request"
        obj = js.as_object(node, what)
        for key in ("source", "destination"):
            if obj.get(key) is None:
                raise InvalidMetadataError(f"{what} is missing required field {key!r}")
        return cls(
            identifier_from_json(obj["source"], f"{what} source"),
            identifier_from_json(obj["destination"], f"{what} destination"),
        )


# --- views ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class CreateViewRequest:
    name: str
    schema: Schema
    view_version: ViewVersion
    properties: Mapping[str, str] = field(default_factory=dict)
    location: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self.location is not None:
            out["location"] = self.location
        out["schema"] = self.schema.to_json()
        out["view-version"] = self.view_version.to_json()
        out["properties"] = dict(self.properties)
        return out

    @classmethod
    def from_json(cls, node: Any) -> CreateViewRequest:
        what = "create view request"
        obj = js.as_object(node, what)
        for key in ("schema", "view-version"):
            if obj.get(key) is None:
                raise InvalidMetadataError(f"{what} is missing required field {key!r}")
        return cls(
            name=js.get_str(obj, "name", what),
            schema=Schema.from_json(obj["schema"]),
            view_version=ViewVersion.from_json(obj["view-version"]),
            properties=_str_map(obj, "properties", what),
            location=js.opt_str(obj, "location", what),
        )


@dataclass(frozen=True)
class LoadViewResult:
    metadata_location: str
    metadata: ViewMetadata
    config: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "metadata-location": self.metadata_location,
            "metadata": self.metadata.to_dict(),
            "config": dict(self.config),
        }

    @classmethod
    def from_json(cls, node: Any) -> LoadViewResult:
        what = "load view result"
        obj = js.as_object(node, what)
        location = js.get_str(obj, "metadata-location", what)
        if obj.get("metadata") is None:
            raise InvalidMetadataError(f"{what} is missing required field 'metadata'")
        metadata = ViewMetadata.from_json(js.as_object(obj["metadata"], f"{what} metadata"))
        object.__setattr__(metadata, "metadata_location", location)
        return cls(location, metadata, _str_map(obj, "config", what))


@dataclass(frozen=True)
class CommitViewRequest:
    updates: tuple[TableUpdate, ...]
    requirements: tuple[AssertViewUUID, ...] = ()
    identifier: Identifier | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.identifier is not None:
            out["identifier"] = identifier_to_json(self.identifier)
        out["requirements"] = [r.to_json() for r in self.requirements]
        out["updates"] = [u.to_json() for u in self.updates]
        return out

    @classmethod
    def from_json(cls, node: Any) -> CommitViewRequest:
        what = "commit view request"
        obj = js.as_object(node, what)
        items = js.get_list(obj, "requirements", what) if obj.get("requirements") else []
        requirements = []
        for item in items:
            kind = js.get_str(js.as_object(item, "view requirement"), "type", "view requirement")
            if kind != AssertViewUUID.type:
                raise InvalidMetadataError(
                    f"unknown view requirement type {kind!r} (known: {AssertViewUUID.type})"
                )
            requirements.append(AssertViewUUID.from_json(item))
        return cls(_updates(obj, what, view=True), tuple(requirements), _opt_identifier(obj, what))


# --- server-side scan planning --------------------------------------------------------------

PlanStatus = Literal["completed", "submitted", "cancelled", "failed"]
_PLAN_STATUSES = ("completed", "submitted", "cancelled", "failed")


@dataclass(frozen=True)
class PlanTableScanRequest:
    """A scan to plan: a point-in-time scan (``snapshot_id``, default the main branch's
    current snapshot) or an incremental one (``start_snapshot_id`` exclusive to
    ``end_snapshot_id`` inclusive), never both. ``filter`` is the expression JSON as sent
    (Java's ``ExpressionParser``), bound to the table's schema by the planner."""

    snapshot_id: int | None = None
    select: tuple[str, ...] | None = None
    filter: Any = None
    case_sensitive: bool = True
    use_snapshot_schema: bool = False
    start_snapshot_id: int | None = None
    end_snapshot_id: int | None = None
    stats_fields: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        incremental = self.start_snapshot_id is not None or self.end_snapshot_id is not None
        if self.snapshot_id is not None and incremental:
            raise ValidationError(
                "invalid scan: snapshot-id (a point-in-time scan) together with "
                "start-snapshot-id or end-snapshot-id (an incremental scan)"
            )
        if self.start_snapshot_id is not None and self.end_snapshot_id is None:
            raise ValidationError("invalid scan: start-snapshot-id needs end-snapshot-id")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in (
            ("snapshot-id", self.snapshot_id),
            ("select", None if self.select is None else list(self.select)),
            ("filter", self.filter),
            ("start-snapshot-id", self.start_snapshot_id),
            ("end-snapshot-id", self.end_snapshot_id),
            ("stats-fields", None if self.stats_fields is None else list(self.stats_fields)),
        ):
            if value is not None:
                out[key] = value
        out["case-sensitive"] = self.case_sensitive
        out["use-snapshot-schema"] = self.use_snapshot_schema
        return out

    @classmethod
    def from_json(cls, node: Any) -> PlanTableScanRequest:
        what = "plan table scan request"
        obj = js.as_object({} if node is None else node, what)

        def names(key: str) -> tuple[str, ...] | None:
            return js.get_str_list(obj, key, what) if obj.get(key) is not None else None

        return cls(
            snapshot_id=js.opt_long(obj, "snapshot-id", what),
            select=names("select"),
            filter=obj.get("filter"),
            case_sensitive=_opt_bool(obj, "case-sensitive", what, True),
            use_snapshot_schema=_opt_bool(obj, "use-snapshot-schema", what, False),
            start_snapshot_id=js.opt_long(obj, "start-snapshot-id", what),
            end_snapshot_id=js.opt_long(obj, "end-snapshot-id", what),
            stats_fields=names("stats-fields"),
        )


@dataclass(frozen=True)
class ScanTasks:
    """File scan tasks (``{"data-file", "delete-file-references", "residual-filter"}``, the
    files in Java's ``ContentFileParser`` JSON), the delete files they reference by index, and
    plan tasks (opaque strings for the ``/tasks`` route)."""

    file_scan_tasks: tuple[Mapping[str, Any], ...] = ()
    delete_files: tuple[Mapping[str, Any], ...] = ()
    plan_tasks: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.delete_files:
            out["delete-files"] = [dict(d) for d in self.delete_files]
        out["file-scan-tasks"] = [dict(t) for t in self.file_scan_tasks]
        if self.plan_tasks:
            out["plan-tasks"] = list(self.plan_tasks)
        return out

    @classmethod
    def from_json(cls, node: Any, what: str = "scan tasks") -> ScanTasks:
        obj = js.as_object(node, what)

        def objects(key: str) -> tuple[Mapping[str, Any], ...]:
            if obj.get(key) is None:
                return ()
            return tuple(js.as_object(i, f"{what} {key}") for i in js.get_list(obj, key, what))

        tasks = objects("file-scan-tasks")
        deletes = objects("delete-files")
        for task in tasks:
            if task.get("data-file") is None:
                raise InvalidMetadataError(f"{what}: a file scan task has no 'data-file'")
            refs = task.get("delete-file-references") or []
            for ref in js.as_list(refs, f"{what} delete-file-references"):
                if type(ref) is not int or not 0 <= ref < len(deletes):
                    raise InvalidMetadataError(
                        f"{what}: delete file reference {ref!r} is not an index of the "
                        f"{len(deletes)} delete files"
                    )
        plan_tasks = js.get_str_list(obj, "plan-tasks", what) if obj.get("plan-tasks") else ()
        return cls(tasks, deletes, plan_tasks)


@dataclass(frozen=True)
class PlanningResult:
    """``PlanTableScanResult`` and ``FetchPlanningResult``: a status, with the tasks when
    completed, a plan id when the server holds state, the error when failed."""

    status: PlanStatus
    tasks: ScanTasks | None = None
    plan_id: str | None = None
    error: ErrorModel | None = None

    def __post_init__(self) -> None:
        if self.status not in _PLAN_STATUSES:
            raise InvalidMetadataError(f"unknown plan status {self.status!r}")
        if (self.tasks is not None) != (self.status == "completed"):
            raise InvalidMetadataError("a planning result has tasks exactly when completed")
        if (self.error is not None) != (self.status == "failed"):
            raise InvalidMetadataError("a planning result has an error exactly when failed")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status}
        if self.plan_id is not None:
            out["plan-id"] = self.plan_id
        if self.tasks is not None:
            out.update(self.tasks.to_json())
        if self.error is not None:
            out.update(self.error.to_json())
        return out

    @classmethod
    def from_json(cls, node: Any) -> PlanningResult:
        what = "planning result"
        obj = js.as_object(node, what)
        status = js.get_str(obj, "status", what)
        if status not in _PLAN_STATUSES:
            raise InvalidMetadataError(f"{what}: unknown status {status!r}")
        tasks = ScanTasks.from_json(obj, what) if status == "completed" else None
        error = ErrorModel.from_json(obj) if status == "failed" else None
        return cls(status, tasks, js.opt_str(obj, "plan-id", what), error)  # type: ignore[arg-type]


@dataclass(frozen=True)
class FetchScanTasksRequest:
    plan_task: str

    def to_json(self) -> dict[str, Any]:
        return {"plan-task": self.plan_task}

    @classmethod
    def from_json(cls, node: Any) -> FetchScanTasksRequest:
        what = "fetch scan tasks request"
        return cls(js.get_str(js.as_object(node, what), "plan-task", what))


def rest_scan_tasks(task_jsons: Iterable[Mapping[str, Any]]) -> ScanTasks:
    """REST file scan tasks of Appendix C task JSON (``FileScanTask.to_json()``, Java's
    ``ScanTaskParser``): each data file with its residual, the delete files listed once and
    referenced by index (Java's ``TableScanResponseParser.serializeScanTasks``)."""
    deletes: list[Mapping[str, Any]] = []
    index: dict[str, int] = {}
    tasks = []
    for task in task_jsons:
        refs = []
        for delete in task.get("delete-files") or ():
            path = delete["file-path"]
            if path not in index:
                index[path] = len(deletes)
                deletes.append(delete)
            refs.append(index[path])
        out: dict[str, Any] = {"data-file": task["data-file"]}
        if refs:
            out["delete-file-references"] = refs
        if task.get("residual-filter") is not None:
            out["residual-filter"] = task["residual-filter"]
        tasks.append(out)
    return ScanTasks(tuple(tasks), tuple(deletes))


def appendix_c_task(
    rest_task: Mapping[str, Any],
    delete_files: Sequence[Mapping[str, Any]],
    schema_json: Mapping[str, Any],
    spec_json: Mapping[str, Any],
) -> dict[str, Any]:
    """The Appendix C task JSON of a REST file scan task (what
    :func:`frazil.table.scan.file_scan_task_from_json` reads): the whole file, its schema and
    spec, its delete files resolved from the response's list."""
    data_file = rest_task["data-file"]
    refs = rest_task.get("delete-file-references") or ()
    return {
        "task-type": "file-scan-task",
        "schema": dict(schema_json),
        "spec": dict(spec_json),
        "data-file": dict(data_file),
        "start": 0,
        "length": data_file["file-size-in-bytes"],
        "delete-files": [dict(delete_files[i]) for i in refs],
        "residual-filter": rest_task.get("residual-filter", True),
    }


def check_metrics_report(node: Any) -> None:
    """A ``ReportMetricsRequest`` is an object with a ``report-type`` of ``scan-report`` or
    ``commit-report`` (its contents are not kept)."""
    what = "report metrics request"
    kind = js.get_str(js.as_object(node, what), "report-type", what)
    if kind not in ("scan-report", "commit-report"):
        raise InvalidMetadataError(f"{what}: unknown report-type {kind!r}")


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
