"""The REST catalog's views (spec: the ``/views`` routes), with the method names and arguments
of :class:`~frazil.catalog.sql.SqlCatalog`'s views: ``create_view``, ``load_view``,
``view_exists``, ``list_views``, ``replace_view``, ``commit_view``, ``drop_view`` and
``rename_view``. A view is built locally (its first version, its schema with aliases and docs)
as for any frazil catalog and sent to the server, which writes its metadata; a replace is a
view commit of ``assert-view-uuid`` and the new version's updates, retried on a 409 against
the view as it is then."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from frazil.catalog import Identifier, IdentifierLike, to_identifier
from frazil.catalog._common import View, table_schema
from frazil.catalog.rest import protocol as p
from frazil.catalog.rest._base import RestCalls, identifiers_page, parse
from frazil.catalog.rest._base import name as _name
from frazil.errors import CommitFailedError, NotFoundError, ValidationError

if TYPE_CHECKING:
    from frazil.catalog.rest._http import Response
    from frazil.schema import Schema
    from frazil.table.updates import TableUpdate
    from frazil.table.view_updates import AssertViewUUID

__all__ = ["ViewOperations"]

_PLACEHOLDER_LOCATION = "/frazil-rest-placeholder"


class ViewOperations(RestCalls):
    """The view methods of :class:`~frazil.catalog.rest.RestCatalog` (module docs)."""

    def _view(self, ident: Identifier, response: Response, what: str) -> View:
        result = parse(response, p.LoadViewResult.from_json, what)
        return View(ident, result.metadata, result.metadata_location)

    def create_view(
        self,
        identifier: IdentifierLike,
        schema: Schema | Any,
        sql: str | Mapping[str, str],
        *,
        dialect: str = "spark",
        default_namespace: IdentifierLike | None = None,
        default_catalog: str | None = None,
        location: str | None = None,
        properties: Mapping[str, str] | None = None,
        column_aliases: list[str] | None = None,
        column_docs: list[str | None] | None = None,
    ) -> View:
        """Create a view: ``sql`` is its text in ``dialect``, or a dialect -> text mapping.
        The default namespace is the view's own unless given; the server picks the location
        unless ``location`` is given."""
        from frazil.table.view_updates import create_view

        ident = self._ident(identifier, "view")
        texts = {dialect: sql} if isinstance(sql, str) else dict(sql)
        namespace = to_identifier(default_namespace) if default_namespace else ident[:-1]
        local = create_view(
            location or _PLACEHOLDER_LOCATION,
            table_schema(schema),
            texts,
            default_namespace=namespace,
            default_catalog=default_catalog,
            column_aliases=column_aliases,
            column_docs=column_docs,
            properties=properties,
        )
        view_schema = local.schema()
        assert view_schema is not None
        request = p.CreateViewRequest(
            name=ident[-1],
            schema=view_schema,
            view_version=local.current_version(),
            properties=dict(local.properties),
            location=location,
        )
        what = f"create view {_name(ident)!r}"
        response = self._call(
            p.CREATE_VIEW, what, "view", namespace=ident[:-1], body=request.to_json()
        )
        return self._view(ident, response, what)

    def load_view(self, identifier: IdentifierLike) -> View:
        ident = self._ident(identifier, "view")
        what = f"load view {_name(ident)!r}"
        response = self._call(p.LOAD_VIEW, what, "view", namespace=ident[:-1], view=ident[-1])
        return self._view(ident, response, what)

    def view_exists(self, identifier: IdentifierLike) -> bool:
        ident = self._ident(identifier, "view")
        endpoint = p.VIEW_EXISTS if p.VIEW_EXISTS in self.endpoints else p.LOAD_VIEW
        try:
            self._call(
                endpoint,
                f"check view {_name(ident)!r}",
                "view",
                namespace=ident[:-1],
                view=ident[-1],
            )
        except NotFoundError:  # NoSuchViewError, or a bare 404 of a HEAD
            return False
        return True

    def list_views(self, namespace: IdentifierLike) -> list[Identifier]:
        ns = to_identifier(namespace)

        return self._paged(
            p.LIST_VIEWS,
            f"list the views of {_name(ns)!r}",
            "namespace",
            identifiers_page,
            namespace=ns,
        )

    def commit_view(
        self,
        identifier: IdentifierLike,
        requirements: Sequence[AssertViewUUID],
        updates: Sequence[TableUpdate],
        *,
        retries: int = 4,
    ) -> View:
        """Commit view updates if ``requirements`` (``assert-view-uuid``) hold (spec:
        replaceView); ``retries`` is the server's business. A 409 is CommitFailedError, a 5xx
        or a lost answer CommitStateUnknownError."""
        ident = self._ident(identifier, "view")
        request = p.CommitViewRequest(tuple(updates), tuple(requirements), ident)
        what = f"commit to view {_name(ident)!r}"
        response = self._call(
            p.UPDATE_VIEW,
            what,
            "view-commit",
            namespace=ident[:-1],
            view=ident[-1],
            body=request.to_json(),
        )
        return self._view(ident, response, what)

    def replace_view(
        self,
        identifier: IdentifierLike,
        schema: Schema | Any,
        sql: str | Mapping[str, str],
        *,
        dialect: str = "spark",
        default_namespace: IdentifierLike | None = None,
        default_catalog: str | None = None,
        column_aliases: list[str] | None = None,
        column_docs: list[str | None] | None = None,
        retries: int = 4,
    ) -> View:
        """Make a new version current (Java's ``replace``), retried on a concurrent change."""
        from frazil.table.view_updates import ReplaceView

        if retries < 0:
            raise ValidationError(f"replace_view retries must be at least 0, got {retries}")
        ident = self._ident(identifier, "view")
        texts = {dialect: sql} if isinstance(sql, str) else dict(sql)
        attempt = 0
        while True:
            view = self.load_view(ident)
            change = ReplaceView(
                view.metadata,
                schema=table_schema(schema),
                sql=texts,
                default_namespace=to_identifier(default_namespace) if default_namespace else None,
                default_catalog=default_catalog,
                column_aliases=column_aliases,
                column_docs=column_docs,
            )
            updates = change.updates()
            if not updates:
                return view
            try:
                return self.commit_view(ident, change.requirements(), updates)
            except CommitFailedError:
                if attempt == retries:
                    raise
            time.sleep(0.05 * 2**attempt)
            attempt += 1

    def drop_view(self, identifier: IdentifierLike) -> None:
        ident = self._ident(identifier, "view")
        self._call(
            p.DELETE_VIEW,
            f"drop view {_name(ident)!r}",
            "view",
            namespace=ident[:-1],
            view=ident[-1],
        )

    def rename_view(self, from_identifier: IdentifierLike, to_identifier_: IdentifierLike) -> View:
        source = self._ident(from_identifier, "view")
        target = self._ident(to_identifier_, "view")
        self._call(
            p.RENAME_VIEW_ENDPOINT,
            f"rename view {_name(source)!r} to {_name(target)!r}",
            "view",
            body=p.RenameTableRequest(source, target).to_json(),
        )
        return self.load_view(target)
