"""A catalog behind an Iceberg REST server (the REST Catalog OpenAPI of Apache Iceberg 1.10.2;
Java's ``RESTSessionCatalog`` is the referee where the document is loose).

``RestCatalog("prod", uri="https://catalog.example.com", warehouse="wh", credential="id:s")``,
or ``load_catalog("prod", type="rest", uri=...)`` (a ``uri`` starting with ``http://`` or
``https://`` makes ``type`` default to ``rest``).

Construction calls ``GET /v1/config`` (with ``warehouse`` as a query parameter) and merges the
properties as the spec says: the server's ``defaults``, then the client's properties, then the
server's ``overrides`` (``uri`` and ``prefix`` among them). When the answer lists
``endpoints``, an operation outside them is refused here with an
:class:`~frazil.errors.UnsupportedOperationError` naming the endpoint; when it lists none, the
spec's default set is assumed (plus Java's view endpoints when ``view-endpoints-supported`` is
true). An existence check uses ``HEAD`` when the server lists it, else a load.

Properties besides those of :mod:`frazil.catalog.rest._http` and :mod:`.auth`:
``rest-page-size`` (the ``pageSize`` of list calls; pages are followed through
``next-page-token``), ``snapshot-loading-mode`` (``all`` only: frazil commits need every
snapshot), ``rest-metrics-reporting-enabled`` (default true: a commit report is posted after
each commit, best effort), ``scan-planning-mode`` (``client``, the default, or ``server``:
scans are planned by the server's ``/plan`` and ``/tasks`` routes when it lists them; see
:mod:`frazil.catalog.rest._planning`), and FileIO properties for the tables' storage.

A table's storage is reached with the catalog's properties, then the ``config`` of its load
result, then the ``storage-credentials`` entry whose prefix is the longest match of its
location (the spec: credentials before config); ``X-Iceberg-Access-Delegation:
vended-credentials`` asks for them (``header.X-Iceberg-Access-Delegation`` changes it).

Commits post ``requirements`` and ``updates`` (:meth:`RestCatalog.commit_table`); a 409 is
:class:`~frazil.errors.CommitFailedError` (the transaction refreshes and retries), and a 5xx,
a timeout or a connection lost after the request went out is
:class:`~frazil.errors.CommitStateUnknownError`, which keeps every file the commit wrote.

The catalog's parts: this module (configuration, namespaces, tables), ``_commits`` (commits,
create transactions, multi-table transactions, commit reports), ``_views``, ``_planning``
(server-side scan planning), ``_http`` (the session and retries), :mod:`.auth`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from frazil.catalog import (
    Catalog,
    Identifier,
    IdentifierLike,
    to_identifier,
)
from frazil.catalog._common import PropertiesUpdateSummary
from frazil.catalog.rest import protocol as p
from frazil.catalog.rest._base import error_for as _error
from frazil.catalog.rest._base import identifiers_page
from frazil.catalog.rest._base import name as _name
from frazil.catalog.rest._base import parse as _parse
from frazil.catalog.rest._commits import CommitOperations, creation_updates
from frazil.catalog.rest._http import (
    HttpClient,
    Response,
    _bool_property,
    _int_property,
    header_properties,
)
from frazil.catalog.rest._metrics import REPORTS
from frazil.catalog.rest._views import ViewOperations
from frazil.catalog.rest.auth import AUTH_KEYS, auth_for
from frazil.errors import (
    CommitStateUnknownError,
    FrazilIOError,
    InvalidMetadataError,
    InvalidValueError,
    LostConnectionError,
    NotFoundError,
    UnsupportedOperationError,
    ValidationError,
)
from frazil.metadata import TableMetadata

if TYPE_CHECKING:
    from frazil.catalog._common import CreateTableTransaction
    from frazil.partitioning import PartitionSpec
    from frazil.schema import Schema
    from frazil.sorting import SortOrder
    from frazil.table._table import Table

__all__ = ["RestCatalog", "creation_updates"]


PAGE_SIZE = "rest-page-size"
SNAPSHOT_LOADING_MODE = "snapshot-loading-mode"
VIEW_ENDPOINTS_SUPPORTED = "view-endpoints-supported"
METRICS_REPORTING_ENABLED = "rest-metrics-reporting-enabled"
ACCESS_DELEGATION = "X-Iceberg-Access-Delegation"
# Catalog credentials never reach a table's FileIO (its properties travel to Spark executors).
_CATALOG_SECRETS = frozenset({"credential", "token"})
# Where a new table's metadata is built locally only to check and number its schema, spec and
# order: the server decides the location.
_PLACEHOLDER_LOCATION = "/frazil-rest-placeholder"
# Tables whose last load result is kept for conditional loads (If-None-Match).
_ETAG_CACHE_SIZE = 16


class RestCatalog(CommitOperations, ViewOperations, Catalog):
    """A catalog served over the Iceberg REST protocol (see the module docs)."""

    def __init__(self, name: str = "rest", **properties: str) -> None:
        raw_warehouse = properties.get("warehouse")
        super().__init__(name, **properties)
        # A REST warehouse is whatever the server calls it (often a name, not a path): sent
        # as given, never made absolute.
        if raw_warehouse is not None:
            self.properties["warehouse"] = raw_warehouse
        uri = properties.get("uri")
        if not uri:
            raise ValidationError(f"RestCatalog {name!r} needs a 'uri' property (http[s]://...)")
        if not uri.lower().startswith(("http://", "https://")):
            raise ValidationError(
                f"RestCatalog {name!r}: uri {uri!r} is not an http:// or https:// URI"
            )
        client_props = dict(self.properties)
        http = HttpClient(client_props)
        http.auth = auth_for(client_props, http)
        config = self._fetch_config(http, client_props)
        merged = {**config.defaults, **client_props, **config.overrides}
        self.properties = merged
        self._config = config
        self.uri = merged.get("uri") or uri
        self.prefix = merged.get("prefix") or None
        # The catalog's client is configured by the merged properties (a server's headers,
        # timeouts); the token of the config call is kept unless the auth settings changed.
        final = HttpClient(merged)
        # The config call's client stays only to renew the token it fetched.
        self._token_http: HttpClient | None = None
        if all(merged.get(k) == client_props.get(k) for k in (*AUTH_KEYS, "uri")):
            final.auth = http.auth
            self._token_http = http
        else:
            http.close()
            final.auth = auth_for(merged, final)
        self._http = final
        if config.endpoints:
            self.endpoints = frozenset(config.endpoints)
        else:
            defaults = set(p.DEFAULT_ENDPOINTS)
            if _bool_property(merged, VIEW_ENDPOINTS_SUPPORTED, False):
                defaults.update(p.VIEW_ENDPOINTS)
            self.endpoints = frozenset(defaults)
        self._page_size = _int_property(merged, PAGE_SIZE, 0, 1) if merged.get(PAGE_SIZE) else None
        mode = merged.get(SNAPSHOT_LOADING_MODE, "all").strip().lower()
        if mode != "all":
            raise ValidationError(
                f"{SNAPSHOT_LOADING_MODE}={mode!r} is not supported: frazil's commits and scans "
                "need every snapshot of a table (use 'all', the default)"
            )
        headers = {k.lower(): v for k, v in header_properties(merged).items()}
        self._delegation = headers.get(ACCESS_DELEGATION.lower(), "vended-credentials")
        self._report_metrics = _bool_property(merged, METRICS_REPORTING_ENABLED, True)
        self._reports = REPORTS
        self._etags: OrderedDict[Identifier, tuple[str, p.LoadTableResult]] = OrderedDict()
        self._etag_lock = threading.Lock()
        self._warned_planning = False  # frazil.catalog.rest._planning warns once
        # Tables whose load config gave a token for their own requests (spec: LoadTableResult).
        self._table_tokens: dict[Identifier, str] = {}

    def __repr__(self) -> str:
        return f"RestCatalog({self.name!r}, {self.uri!r})"

    def close(self) -> None:
        """Close the HTTP connections (the catalog can no longer be used)."""
        self._http.close()
        if self._token_http is not None:
            self._token_http.close()

    def __enter__(self) -> RestCatalog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- the HTTP calls --------------------------------------------------------------------

    def _fetch_config(self, http: HttpClient, props: Mapping[str, str]) -> p.ConfigResponse:
        uri = props["uri"].rstrip("/")
        params = {"warehouse": props["warehouse"]} if props.get("warehouse") else None
        what = f"GET {uri}{p.CONFIG}"
        try:
            response = http.request("GET", uri + p.CONFIG, params=params)
        except FrazilIOError as error:
            raise type(error)(f"cannot reach the REST catalog {self.name!r}: {error}") from None
        if not response.ok:
            raise _error(response, "default", f"REST catalog {self.name!r}: {what}")
        return _parse(response, p.ConfigResponse.from_json, what)

    def _url(self, template: str, **parts: Any) -> str:
        return self.uri.rstrip("/") + p.route_path(template, self.prefix, **parts)

    def _check_endpoint(self, endpoint: p.Endpoint, what: str) -> None:
        if endpoint not in self.endpoints:
            raise UnsupportedOperationError(
                f"cannot {what}: the REST catalog at {self.uri} does not offer {endpoint} "
                "(its /v1/config lists the endpoints it supports, and this is not one)"
            )

    def _call(
        self,
        endpoint: p.Endpoint,
        what: str,
        context: p.ErrorContext,
        *,
        namespace: Sequence[str] | None = None,
        table: str | None = None,
        view: str | None = None,
        plan_id: str | None = None,
        params: Mapping[str, str] | None = None,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
        not_modified_ok: bool = False,
    ) -> Response:
        """``endpoint`` called for ``what`` (an operation and its object, for messages); a
        non-2xx answer raises the error its ErrorModel maps to in ``context`` (a 304 is
        returned when ``not_modified_ok``: the caller sent ``If-None-Match``)."""
        self._check_endpoint(endpoint, what)
        url = self._url(endpoint.path, namespace=namespace, table=table, view=view, plan_id=plan_id)
        if table is not None and namespace is not None:
            table_token = self._table_tokens.get((*namespace, table))
            if table_token is not None:
                headers = {**(headers or {}), "Authorization": f"Bearer {table_token}"}
        try:
            response = self._http.request(
                endpoint.method, url, params=params, json_body=body, headers=headers
            )
        except LostConnectionError as error:
            if context in ("commit", "view-commit"):
                raise CommitStateUnknownError(
                    f"{what}: no answer from the REST catalog ({error}); the commit may or may "
                    "not have landed: refresh to find out (its files are kept)"
                ) from None
            raise
        if not response.ok and not (not_modified_ok and response.status == 304):
            raise _error(response, context, what)
        return response

    def _paged(
        self,
        endpoint: p.Endpoint,
        what: str,
        context: p.ErrorContext,
        parse: Callable[[Any], tuple[Sequence[Identifier], str | None]],
        *,
        namespace: Sequence[str] | None = None,
        params: Mapping[str, str] | None = None,
    ) -> list[Identifier]:
        """Every page of a list call (spec ``PageToken``: start with an empty ``pageToken``,
        follow ``next-page-token`` until it is null or missing)."""
        out: list[Identifier] = []
        token = ""
        seen: set[str] = set()
        while True:
            query = {**(params or {}), "pageToken": token}
            if self._page_size is not None:
                query["pageSize"] = str(self._page_size)
            response = self._call(endpoint, what, context, namespace=namespace, params=query)
            items, token_or_none = _parse(response, parse, what)
            out.extend(items)
            if not token_or_none:
                return out
            if token_or_none in seen:
                raise InvalidValueError(
                    f"{what}: the server returned page token {token_or_none!r} twice"
                )
            seen.add(token_or_none)
            token = token_or_none

    # --- namespaces ------------------------------------------------------------------------

    def _ns(self, namespace: IdentifierLike) -> Identifier:
        return to_identifier(namespace)

    def create_namespace(
        self, namespace: IdentifierLike, properties: Mapping[str, str] | None = None
    ) -> None:
        ns = self._ns(namespace)
        request = p.CreateNamespaceRequest(ns, dict(properties or {}))
        self._call(
            p.CREATE_NAMESPACE,
            f"create namespace {_name(ns)!r}",
            "namespace",
            body=request.to_json(),
        )

    def list_namespaces(self, namespace: IdentifierLike = ()) -> list[Identifier]:
        parent = self._ns(namespace) if namespace else ()
        params = {"parent": p.namespace_param(parent)} if parent else None
        what = f"list the namespaces in {_name(parent)!r}" if parent else "list namespaces"

        def parse(node: Any) -> tuple[Sequence[Identifier], str | None]:
            page = p.ListNamespacesResponse.from_json(node)
            return page.namespaces, page.next_page_token

        return self._paged(p.LIST_NAMESPACES, what, "namespace", parse, params=params)

    def drop_namespace(self, namespace: IdentifierLike) -> None:
        ns = self._ns(namespace)
        self._call(
            p.DELETE_NAMESPACE, f"drop namespace {_name(ns)!r}", "drop-namespace", namespace=ns
        )

    def load_namespace_properties(self, namespace: IdentifierLike) -> dict[str, str]:
        ns = self._ns(namespace)
        what = f"load namespace {_name(ns)!r}"
        response = self._call(p.LOAD_NAMESPACE, what, "namespace", namespace=ns)
        loaded = _parse(response, p.NamespaceResponse.from_json, what)
        return dict(loaded.properties or {})

    def namespace_exists(self, namespace: IdentifierLike) -> bool:
        ns = self._ns(namespace)
        what = f"check namespace {_name(ns)!r}"
        endpoint = p.NAMESPACE_EXISTS if p.NAMESPACE_EXISTS in self.endpoints else p.LOAD_NAMESPACE
        try:
            self._call(endpoint, what, "namespace", namespace=ns)
        except NotFoundError:  # NoSuchNamespaceError, or a bare 404 of a HEAD
            return False
        return True

    def update_namespace_properties(
        self,
        namespace: IdentifierLike,
        removals: set[str] | None = None,
        updates: Mapping[str, str] | None = None,
    ) -> PropertiesUpdateSummary:
        ns = self._ns(namespace)
        request = p.UpdateNamespacePropertiesRequest(
            tuple(sorted(removals or ())), dict(updates or {})
        )
        what = f"update the properties of namespace {_name(ns)!r}"
        response = self._call(
            p.UPDATE_NAMESPACE, what, "namespace", namespace=ns, body=request.to_json()
        )
        result = _parse(response, p.UpdateNamespacePropertiesResponse.from_json, what)
        return PropertiesUpdateSummary(
            removed=list(result.removed),
            updated=list(result.updated),
            missing=list(result.missing or ()),
        )

    # --- tables ----------------------------------------------------------------------------

    def _ident(self, identifier: IdentifierLike, what: str = "table") -> Identifier:
        ident = to_identifier(identifier)
        if len(ident) < 2:
            raise ValidationError(f"a {what} identifier needs a namespace: got {identifier!r}")
        return ident

    def _io_properties(self, result: p.LoadTableResult) -> dict[str, str]:
        """The FileIO properties of a loaded table (module docs)."""
        props = {k: v for k, v in self.properties.items() if k not in _CATALOG_SECRETS}
        props.update({k: v for k, v in result.config.items() if k not in _CATALOG_SECRETS})
        location = result.metadata.location
        best: p.StorageCredential | None = None
        for credential in result.storage_credentials:
            if location.startswith(credential.prefix) and (
                best is None or len(credential.prefix) > len(best.prefix)
            ):
                best = credential
        if best is not None:
            props.update(best.config)
        return props

    def _table(self, identifier: Identifier, result: p.LoadTableResult) -> Table:
        from frazil.table._table import Table

        token = result.config.get("token")
        if token:
            self._table_tokens[identifier] = token
        else:
            self._table_tokens.pop(identifier, None)
        return Table(
            result.metadata,
            result.metadata_location,
            self._io_properties(result),
            identifier,
            catalog=self,
        )

    def _load(self, ident: Identifier) -> p.LoadTableResult:
        """The table's load result. The last one of each recently loaded table is kept with its
        ``ETag`` and sent as ``If-None-Match``: a 304 (spec: loadTable) reuses it, so a refresh
        of an unchanged table moves no metadata."""
        what = f"load table {_name(ident)!r}"
        headers = {ACCESS_DELEGATION: self._delegation}
        with self._etag_lock:
            cached = self._etags.get(ident)
        if cached is not None:
            headers["If-None-Match"] = cached[0]
        response = self._call(
            p.LOAD_TABLE,
            what,
            "table",
            namespace=ident[:-1],
            table=ident[-1],
            params={"snapshots": "all"},
            headers=headers,
            not_modified_ok=cached is not None,
        )
        if response.status == 304:
            assert cached is not None
            return cached[1]
        result = _parse(response, p.LoadTableResult.from_json, what)
        etag = response.headers.get("etag")
        with self._etag_lock:
            self._etags.pop(ident, None)
            if etag and result.metadata_location is not None:
                self._etags[ident] = (etag, result)
                while len(self._etags) > _ETAG_CACHE_SIZE:
                    self._etags.popitem(last=False)
        return result

    def load_table(self, identifier: IdentifierLike) -> Table:
        ident = self._ident(identifier)
        return self._table(ident, self._load(ident))

    def table_exists(self, identifier: IdentifierLike) -> bool:
        ident = self._ident(identifier)
        if p.TABLE_EXISTS not in self.endpoints:
            return super().table_exists(ident)
        try:
            self._call(
                p.TABLE_EXISTS,
                f"check table {_name(ident)!r}",
                "table",
                namespace=ident[:-1],
                table=ident[-1],
            )
        except NotFoundError:
            return False
        return True

    def list_tables(self, namespace: IdentifierLike) -> list[Identifier]:
        ns = self._ns(namespace)

        return self._paged(
            p.LIST_TABLES,
            f"list the tables of {_name(ns)!r}",
            "namespace",
            identifiers_page,
            namespace=ns,
        )

    def _create_request(
        self,
        ident: Identifier,
        schema: Schema | Any,
        location: str | None,
        partition_spec: PartitionSpec | None,
        sort_order: SortOrder | None,
        properties: Mapping[str, str] | None,
        format_version: int | None,
        stage: bool,
    ) -> p.CreateTableRequest:
        """The request creating ``ident``: its schema, spec and order numbered and checked here
        as for any frazil catalog (a pyarrow schema converted, write properties frazil cannot
        honour refused), the location and the rest left to the server."""
        from frazil.table.create import new_table_metadata

        props = dict(properties or {})
        local = new_table_metadata(
            schema,
            location or _PLACEHOLDER_LOCATION,
            partition_spec,
            sort_order,
            props,
            format_version,
        )
        if format_version is not None or "format-version" in props:
            props["format-version"] = str(local.format_version)
        order = local.sort_orders[0]
        return p.CreateTableRequest(
            name=ident[-1],
            schema=local.schema(),
            location=location,
            partition_spec=local.spec(),
            write_order=order,
            stage_create=stage,
            properties=props,
        )

    def create_table(
        self,
        identifier: IdentifierLike,
        schema: Schema | Any,
        location: str | None = None,
        partition_spec: PartitionSpec | None = None,
        sort_order: SortOrder | None = None,
        properties: Mapping[str, str] | None = None,
        format_version: int | None = None,
    ) -> Table:
        """Create a table with one ``POST .../tables`` (the server picks the location unless
        ``location`` is given)."""
        ident = self._ident(identifier)
        what = f"create table {_name(ident)!r}"
        request = self._create_request(
            ident, schema, location, partition_spec, sort_order, properties, format_version, False
        )
        return self._table(ident, self._post_create(ident, request, what))

    def _post_create(
        self, ident: Identifier, request: p.CreateTableRequest, what: str
    ) -> p.LoadTableResult:
        response = self._call(
            p.CREATE_TABLE,
            what,
            "create-table",
            namespace=ident[:-1],
            body=request.to_json(),
            headers={ACCESS_DELEGATION: self._delegation},
        )
        return _parse(response, p.LoadTableResult.from_json, what)

    def create_table_transaction(
        self,
        identifier: IdentifierLike,
        schema: Schema | Any,
        location: str | None = None,
        partition_spec: PartitionSpec | None = None,
        sort_order: SortOrder | None = None,
        properties: Mapping[str, str] | None = None,
        format_version: int | None = None,
    ) -> CreateTableTransaction:
        """A create transaction through the REST stage-create: the server returns the new
        table's metadata without creating it; the commit posts its initialization and the
        staged changes with ``assert-create`` (and fails with TableAlreadyExistsError, deleting
        what the changes wrote, when the name was taken meanwhile)."""
        from frazil.catalog._common import CreateTableTransaction

        ident = self._ident(identifier)
        what = f"stage the creation of table {_name(ident)!r}"
        request = self._create_request(
            ident, schema, location, partition_spec, sort_order, properties, format_version, True
        )
        result = self._post_create(ident, request, what)
        if result.metadata_location is not None:
            raise InvalidMetadataError(
                f"{what}: the server answered a staged create with a metadata location "
                f"({result.metadata_location}), as if the table were created"
            )
        return CreateTableTransaction(self._table(ident, result))

    def drop_table(self, identifier: IdentifierLike, purge: bool = False) -> None:
        """Drop the table; ``purge`` asks the server to delete its files too
        (``purgeRequested=true``: the server does the purge and reports no partial outcome)."""
        ident = self._ident(identifier)
        self._call(
            p.DELETE_TABLE,
            f"{'purge' if purge else 'drop'} table {_name(ident)!r}",
            "table",
            namespace=ident[:-1],
            table=ident[-1],
            params={"purgeRequested": "true"} if purge else None,
        )

    def rename_table(self, from_identifier: IdentifierLike, to_identifier: IdentifierLike) -> Table:
        source, target = self._ident(from_identifier), self._ident(to_identifier)
        request = p.RenameTableRequest(source, target)
        self._call(
            p.RENAME_TABLE_ENDPOINT,
            f"rename table {_name(source)!r} to {_name(target)!r}",
            "table",
            body=request.to_json(),
        )
        return self.load_table(target)

    def register_table(self, identifier: IdentifierLike, metadata_location: str) -> Table:
        ident = self._ident(identifier)
        request = p.RegisterTableRequest(ident[-1], metadata_location)
        what = f"register table {_name(ident)!r} at {metadata_location}"
        response = self._call(
            p.REGISTER_TABLE,
            what,
            "create-table",
            namespace=ident[:-1],
            body=request.to_json(),
            headers={ACCESS_DELEGATION: self._delegation},
        )
        return self._table(ident, _parse(response, p.LoadTableResult.from_json, what))

    # --- commits ---------------------------------------------------------------------------

    def _current_metadata_location(self, identifier: Identifier) -> str:
        location = self._load(identifier).metadata_location
        if location is None:
            raise InvalidMetadataError(
                f"table {_name(identifier)!r}: the server loaded it without a metadata location"
            )
        return location

    def _check_can_create(self, identifier: Identifier) -> None:
        """The server checks when the table is created."""

    def _create_from_metadata(self, identifier: Identifier, metadata: TableMetadata) -> Table:
        # Creation is the server's: create_table and the create transaction's commit post it.
        raise UnsupportedOperationError(
            "a REST catalog creates tables on the server: use create_table"
        )

    def _swap(
        self,
        identifier: Identifier,
        expected_location: str,
        new_metadata: TableMetadata,
        new_location: str,
    ) -> None:
        # The server writes the metadata file and swaps the pointer (commit_table posts it).
        raise UnsupportedOperationError("a REST catalog's server swaps table pointers")

    # --- server-side scan planning (frazil.catalog.rest._planning) --------------------------

    def _plan_files(self, scan: Any) -> Iterator[Any] | None:
        """The scan's tasks planned by the server, or None to plan locally (see
        :mod:`frazil.catalog.rest._planning`)."""
        from frazil.catalog.rest._planning import plan_files

        return plan_files(self, scan)
