"""The view routes of the REST protocol (list, create, load, commit, drop, rename, exists),
through the catalog's view methods; a catalog that stores no views answers them with 406."""

from __future__ import annotations

from typing import Any

from frazil.catalog._common import check_safe_name
from frazil.catalog.rest import protocol as p
from frazil.errors import BadRequestError, NoSuchViewError, UnsupportedOperationError
from frazil.rest.server._http import NO_CONTENT, Call, Reply, json_reply
from frazil.rest.server.routes import Service, _ident, _namespace, paginate
from frazil.view import SQLViewRepresentation

__all__ = ["Views"]


class Views:
    def __init__(self, service: Service) -> None:
        self.service = service

    def _catalog(self) -> Any:
        """The catalog, with its view methods (not part of the Catalog interface)."""
        catalog = self.service.catalog
        if not self.service.views:
            raise UnsupportedOperationError(
                f"{type(catalog).__name__} {catalog.name!r} stores no views"
            )
        return catalog

    def _view(self, call: Call) -> tuple[str, ...]:
        return _ident(_namespace(call), p.decode_string(call.params["view"]), "view")

    def _result(self, view: Any) -> Reply:
        return json_reply(p.LoadViewResult(view.metadata_location, view.metadata).to_json())

    def list_views(self, call: Call) -> Reply:
        catalog = self._catalog()
        ns = _namespace(call)
        self.service.require_namespace(ns)
        page, token = paginate(call, catalog.list_views(ns), self.service.page_size)
        return json_reply(p.ListTablesResponse(tuple(page), token).to_json())

    def create_view(self, call: Call) -> Reply:
        catalog = self._catalog()
        ns = _namespace(call)
        request = p.CreateViewRequest.from_json(p.read_json(call.body, "create view request"))
        ident = _ident(ns, request.name, "view")
        if request.location is not None:
            self.service.check_location(request.location, "view location")
        version = request.view_version
        texts: dict[str, str] = {}
        for rep in version.representations:
            if not isinstance(rep, SQLViewRepresentation):
                raise BadRequestError(f"unsupported view representation type {rep.type!r}")
            texts[rep.dialect] = rep.sql
        if not texts:
            raise BadRequestError("a view version needs at least one SQL representation")
        default_namespace = version.default_namespace
        if default_namespace:
            check_safe_name(default_namespace, "namespace")
        view = catalog.create_view(
            ident,
            request.schema,
            texts,
            default_namespace=default_namespace or None,
            default_catalog=version.default_catalog,
            location=request.location,
            properties=request.properties or None,
        )
        return self._result(view)

    def load_view(self, call: Call) -> Reply:
        return self._result(self._catalog().load_view(self._view(call)))

    def view_exists(self, call: Call) -> Reply:
        ident = self._view(call)
        if not self._catalog().view_exists(ident):
            raise NoSuchViewError(f"view {'.'.join(ident)!r} does not exist")
        return NO_CONTENT

    def commit_view(self, call: Call) -> Reply:
        catalog = self._catalog()
        ident = self._view(call)
        request = p.CommitViewRequest.from_json(p.read_json(call.body, "commit view request"))
        if request.identifier is not None and request.identifier != ident:
            raise BadRequestError(
                f"the commit's identifier {'.'.join(request.identifier)} is not the route's "
                f"view {'.'.join(ident)}"
            )
        self.service.check_updates(request.updates, "view")
        return self._result(catalog.commit_view(ident, request.requirements, request.updates))

    def drop_view(self, call: Call) -> Reply:
        self._catalog().drop_view(self._view(call))
        return NO_CONTENT

    def rename_view(self, call: Call) -> Reply:
        catalog = self._catalog()
        request = p.RenameTableRequest.from_json(p.read_json(call.body, "rename request"))
        check_safe_name(request.source, "view")
        check_safe_name(request.destination, "view")
        catalog.rename_view(request.source, request.destination)
        return NO_CONTENT
