"""The catalog routes of the REST protocol over one frazil catalog: config, namespaces,
tables, commits and transactions, metrics and credentials (views: :mod:`.views`, scan
planning: :mod:`.planning`).

Each handler takes a :class:`~frazil.rest.server._http.Call` and returns a
:class:`~frazil.rest.server._http.Reply`; it runs in a worker thread, since catalog calls
block. Everything stored goes through the catalog's own methods (its rules are never copied
here); this module only translates the protocol, validates what a client may not do (names
that could leave the warehouse, locations outside it) and caches metadata files.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import posixpath
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, TypeVar

from frazil.catalog import TableChange, absolute_location
from frazil.catalog._common import check_safe_name
from frazil.catalog.rest import protocol as p
from frazil.errors import (
    BadRequestError,
    NoSuchNamespaceError,
    NoSuchTableError,
    UnsupportedOperationError,
    ValidationError,
)
from frazil.rest.server._cache import MetadataCache
from frazil.rest.server._http import NO_CONTENT, Call, Reply, json_reply
from frazil.table.updates import SetLocation, SetProperties, TableUpdate

if TYPE_CHECKING:
    from frazil.catalog import Catalog
    from frazil.metadata import TableMetadata

__all__ = ["Service"]

T = TypeVar("T")

# Table properties that place files: checked like a table's location.
_PATH_PROPERTIES = (
    "write.metadata.path",
    "write.data.path",
    "write.object-storage.path",
    "write.folder-storage.path",
)
DEFAULT_PAGE_SIZE = 1000


def _namespace(call: Call) -> tuple[str, ...]:
    ns = p.decode_namespace(call.params["namespace"])
    check_safe_name(ns, "namespace")
    return ns


def _ident(ns: Sequence[str], name: str, what: str = "table") -> tuple[str, ...]:
    ident = (*ns, name)
    check_safe_name(ident, what)
    return ident


def _place(location: str) -> tuple[str, str]:
    """(scheme, normalized path) of a location: ``..`` resolved, a local path or ``file:`` URI
    with the scheme ``""``, an object store's bucket as the path's first segment."""
    resolved = absolute_location(location)
    scheme, sep, rest = resolved.partition("://")
    if not sep:
        scheme, rest = "", resolved[5:] if resolved.lower().startswith("file:") else resolved
    scheme = scheme.lower()
    if scheme == "file":
        scheme = ""
    return scheme, posixpath.normpath("/" + rest.lstrip("/"))


def _page_token(last: Sequence[str]) -> str:
    return base64.urlsafe_b64encode(p.dumps(list(last)).encode("utf-8")).decode("ascii")


def _after_token(token: str) -> tuple[str, ...]:
    try:
        node = json.loads(base64.urlsafe_b64decode(token.encode("ascii")))
    except (ValueError, binascii.Error, UnicodeError):
        raise BadRequestError(f"invalid pageToken {token!r}: not a token of this server") from None
    if not isinstance(node, list) or not all(isinstance(x, str) for x in node):
        raise BadRequestError(f"invalid pageToken {token!r}: not a token of this server")
    return tuple(node)


def paginate(
    call: Call, items: Iterable[tuple[str, ...]], default_size: int
) -> tuple[list[tuple[str, ...]], str | None]:
    """One page of ``items`` (sorted): everything when the request has no ``pageToken`` (the
    OpenAPI: a server must then return all results), else up to ``pageSize`` (default
    ``default_size``) after the token's item. The token names the last item sent, so a page
    stays right when items are added or dropped in between."""
    ordered = sorted(items)
    token = call.query.get("pageToken")
    size_text = call.query.get("pageSize")
    size = default_size
    if size_text is not None and size_text != "":
        try:
            size = int(size_text)
        except ValueError:
            raise BadRequestError(
                f"pageSize must be a positive integer, got {size_text!r}"
            ) from None
        if size < 1:
            raise BadRequestError(f"pageSize must be a positive integer, got {size}")
    if token is None:
        return ordered, None
    if token:
        after = _after_token(token)
        ordered = [item for item in ordered if item > after]
    page = ordered[:size]
    return page, (_page_token(page[-1]) if len(ordered) > size else None)


class Service:
    """The REST protocol over ``catalog`` (see :func:`frazil.rest.server.app`)."""

    def __init__(
        self,
        catalog: Catalog,
        *,
        prefix: str | None = None,
        defaults: Mapping[str, str] | None = None,
        overrides: Mapping[str, str] | None = None,
        allow_external_locations: bool = False,
        page_size: int = DEFAULT_PAGE_SIZE,
        metadata_cache_size: int = 256,
    ) -> None:
        self.catalog = catalog
        self.prefix = prefix.strip("/") if prefix else None
        self.cache = MetadataCache(catalog, metadata_cache_size)
        self.allow_external_locations = allow_external_locations
        if page_size < 1:
            raise ValidationError(f"page_size must be positive, got {page_size}")
        self.page_size = page_size
        self.views = callable(getattr(catalog, "load_view", None))
        endpoints = [e for e in p.ALL_ENDPOINTS if self.views or "/views" not in e.path]
        over = dict(overrides or {})
        if self.prefix:
            over["prefix"] = self.prefix
        self._config = json_reply(
            p.ConfigResponse(dict(defaults or {}), over, tuple(endpoints)).to_json()
        )
        warehouse = catalog.properties.get("warehouse") or getattr(catalog, "warehouse", None)
        self.warehouse: str | None = str(warehouse).rstrip("/") if warehouse else None

    # --- checks -----------------------------------------------------------------------------

    def check_location(self, location: str, what: str) -> None:
        """Refuse a location outside the catalog's warehouse (a client must not make the
        server write elsewhere), unless the server allows external locations."""
        if self.allow_external_locations or self.warehouse is None:
            return
        scheme, path = _place(location)
        root_scheme, root = _place(self.warehouse)
        if scheme != root_scheme or not (path == root or path.startswith(root.rstrip("/") + "/")):
            raise ValidationError(
                f"{what} {location!r} is outside the catalog's warehouse {self.warehouse} "
                "(this server writes only there)"
            )

    def check_properties(self, properties: Mapping[str, str], what: str) -> None:
        for key in _PATH_PROPERTIES:
            if key in properties:
                self.check_location(properties[key], f"{what} property {key}")

    def check_updates(self, updates: Iterable[TableUpdate], what: str) -> None:
        for update in updates:
            if isinstance(update, SetLocation):
                self.check_location(update.location, f"{what} location")
            elif isinstance(update, SetProperties):
                self.check_properties(update.updates, what)

    def require_namespace(self, ns: Sequence[str]) -> None:
        exists = getattr(self.catalog, "namespace_exists", None)
        if callable(exists):
            if not exists(ns):
                raise NoSuchNamespaceError(f"namespace {'.'.join(ns)!r} does not exist")
        else:
            self.catalog.load_namespace_properties(ns)

    # --- config ------------------------------------------------------------------------------

    def config(self, call: Call) -> Reply:
        warehouse = call.query.get("warehouse")
        if warehouse and warehouse not in (self.catalog.name, self.warehouse):
            raise BadRequestError(
                f"unknown warehouse {warehouse!r}: this server serves catalog "
                f"{self.catalog.name!r} (warehouse {self.warehouse})"
            )
        return self._config

    # --- namespaces --------------------------------------------------------------------------

    def list_namespaces(self, call: Call) -> Reply:
        parent = p.namespace_from_param(call.query.get("parent", ""))
        if parent:
            check_safe_name(parent, "namespace")
            self.require_namespace(parent)
        page, token = paginate(call, self.catalog.list_namespaces(parent), self.page_size)
        return json_reply(p.ListNamespacesResponse(tuple(page), token).to_json())

    def create_namespace(self, call: Call) -> Reply:
        request = p.CreateNamespaceRequest.from_json(p.read_json(call.body, "create namespace"))
        check_safe_name(request.namespace, "namespace")
        self.check_properties(request.properties, "namespace")
        if "location" in request.properties:
            self.check_location(request.properties["location"], "namespace location")
        self.catalog.create_namespace(request.namespace, request.properties or None)
        props = self.catalog.load_namespace_properties(request.namespace)
        return json_reply(p.NamespaceResponse(request.namespace, props).to_json())

    def load_namespace(self, call: Call) -> Reply:
        ns = _namespace(call)
        props = self.catalog.load_namespace_properties(ns)
        return json_reply(p.NamespaceResponse(ns, props).to_json())

    def namespace_exists(self, call: Call) -> Reply:
        self.require_namespace(_namespace(call))
        return NO_CONTENT

    def drop_namespace(self, call: Call) -> Reply:
        self.catalog.drop_namespace(_namespace(call))
        return NO_CONTENT

    def update_namespace_properties(self, call: Call) -> Reply:
        ns = _namespace(call)
        body = p.read_json(call.body, "update namespace properties")
        request = p.UpdateNamespacePropertiesRequest.from_json(body)
        if "location" in request.updates:
            self.check_location(request.updates["location"], "namespace location")
        before = self.catalog.load_namespace_properties(ns)
        summary = self.catalog.update_namespace_properties(
            ns, set(request.removals), dict(request.updates)
        )
        # The catalog's own summary where it gives one (the SQL catalog), else Java's
        # CatalogHandlers.updateNamespaceProperties: missing = removals not there before.
        missing = getattr(summary, "missing", None)
        if missing is None:
            missing = [k for k in request.removals if k not in before]
        removed = [k for k in request.removals if k not in set(missing)]
        response = p.UpdateNamespacePropertiesResponse(
            tuple(sorted(request.updates)), tuple(sorted(removed)), tuple(sorted(missing))
        )
        return json_reply(response.to_json())

    # --- tables ------------------------------------------------------------------------------

    def list_tables(self, call: Call) -> Reply:
        ns = _namespace(call)
        self.require_namespace(ns)
        page, token = paginate(call, self.catalog.list_tables(ns), self.page_size)
        return json_reply(p.ListTablesResponse(tuple(page), token).to_json())

    def _table(self, call: Call) -> tuple[str, ...]:
        return _ident(_namespace(call), p.decode_string(call.params["table"]))

    def _load_reply(
        self, location: str, call: Call | None = None, status: int = 200, refs_only: bool = False
    ) -> Reply:
        """The LoadTableResult of the metadata file ``location``, its metadata JSON spliced in
        from the cache, with an ETag of the file (and the snapshots mode)."""
        etag = '"' + hashlib.sha1(f"{location}|{refs_only}".encode()).hexdigest() + '"'
        if call is not None and call.headers.get("if-none-match") == etag:
            return Reply(304, None, {"ETag": etag})
        body = b"".join(
            (
                b'{"metadata-location":',
                p.dumps(location).encode("utf-8"),
                b',"metadata":',
                self.cache.json(location, refs_only),
                b',"config":{}}',
            )
        )
        return Reply(status, body, {"ETag": etag})

    def load_table(self, call: Call) -> Reply:
        ident = self._table(call)
        mode = call.query.get("snapshots") or "all"
        if mode not in ("all", "refs"):
            raise BadRequestError(f"query parameter snapshots must be all or refs, got {mode!r}")
        location = self.catalog.current_metadata_location(ident)
        return self._load_reply(location, call, refs_only=mode == "refs")

    def table_exists(self, call: Call) -> Reply:
        ident = self._table(call)
        if not self.catalog.table_exists(ident):
            raise NoSuchTableError(f"table {'.'.join(ident)!r} does not exist")
        return NO_CONTENT

    def create_table(self, call: Call) -> Reply:
        ns = _namespace(call)
        request = p.CreateTableRequest.from_json(p.read_json(call.body, "create table request"))
        ident = _ident(ns, request.name)
        if request.location is not None:
            self.check_location(request.location, "table location")
        self.check_properties(request.properties, "table")
        args = (
            ident,
            request.schema,
            request.location,
            request.partition_spec,
            request.write_order,
            request.properties,
        )
        if request.stage_create:
            # Nothing is stored: the client commits the table with assert-create later.
            staged = self.catalog.create_table_transaction(*args).table.metadata
            return json_reply(p.LoadTableResult(staged, None).to_json())
        table = self.catalog.create_table(*args)
        assert table.metadata_location is not None
        self.cache.put(table.metadata_location, table.metadata)
        return self._load_reply(table.metadata_location)

    def commit_table(self, call: Call) -> Reply:
        ident = self._table(call)
        request = p.CommitTableRequest.from_json(p.read_json(call.body, "commit table request"))
        if request.identifier is not None and request.identifier != ident:
            raise BadRequestError(
                f"the commit's identifier {'.'.join(request.identifier)} is not the route's "
                f"table {'.'.join(ident)}"
            )
        self.check_updates(request.updates, "table")
        done = self.catalog.commit_updates(
            ident, request.requirements, request.updates, read=self.cache.read
        )
        self.cache.put(done.metadata_location, done.metadata)
        body = b"".join(
            (
                b'{"metadata-location":',
                p.dumps(done.metadata_location).encode("utf-8"),
                b',"metadata":',
                self.cache.json(done.metadata_location),
                b"}",
            )
        )
        return Reply(200, body)

    def drop_table(self, call: Call) -> Reply:
        self.catalog.drop_table(self._table(call), purge=call.flag("purgeRequested"))
        return NO_CONTENT

    def register_table(self, call: Call) -> Reply:
        ns = _namespace(call)
        request = p.RegisterTableRequest.from_json(p.read_json(call.body, "register request"))
        ident = _ident(ns, request.name)
        self.check_location(request.metadata_location, "registered metadata file")
        if request.overwrite:
            raise UnsupportedOperationError(
                "register with overwrite is not supported: drop the table first"
            )
        table = self.catalog.register_table(ident, request.metadata_location)
        assert table.metadata_location is not None
        self.cache.put(table.metadata_location, table.metadata)
        return self._load_reply(table.metadata_location)

    def rename_table(self, call: Call) -> Reply:
        request = p.RenameTableRequest.from_json(p.read_json(call.body, "rename request"))
        check_safe_name(request.source, "table")
        check_safe_name(request.destination, "table")
        self.catalog.rename_table(request.source, request.destination)
        return NO_CONTENT

    def report_metrics(self, call: Call) -> Reply:
        self._table(call)
        p.check_metrics_report(p.read_json(call.body, "report metrics request"))
        return NO_CONTENT  # accepted and dropped: this server keeps no metrics

    def load_credentials(self, call: Call) -> Reply:
        ident = self._table(call)
        if not self.catalog.table_exists(ident):
            raise NoSuchTableError(f"table {'.'.join(ident)!r} does not exist")
        # Local and configured stores: this server vends no credentials.
        return json_reply(p.LoadCredentialsResponse(()).to_json())

    def commit_transaction(self, call: Call) -> Reply:
        body = p.read_json(call.body, "commit transaction request")
        request = p.CommitTransactionRequest.from_json(body)
        changes = []
        for change in request.table_changes:
            assert change.identifier is not None
            check_safe_name(change.identifier, "table")
            self.check_updates(change.updates, "table")
            changes.append(TableChange(change.identifier, change.requirements, change.updates))
        done = self.catalog.commit_transaction(changes, read=self.cache.read)
        for result in done:
            self.cache.put(result.metadata_location, result.metadata)
        return NO_CONTENT

    # helpers for the other route modules

    def table_metadata(self, ident: Sequence[str]) -> tuple[TableMetadata, str]:
        location = self.catalog.current_metadata_location(ident)
        return self.cache.read(location), location


Handler = Callable[[Call], Reply]
