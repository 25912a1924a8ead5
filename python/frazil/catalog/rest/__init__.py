"""The Iceberg REST catalog protocol (the REST Catalog OpenAPI of Apache Iceberg 1.10.2).

:mod:`frazil.catalog.rest.protocol` holds what the client and the server (``frazil serve``,
:mod:`frazil.rest.server`) share: routes, endpoint names, namespace encoding, the error model
and the JSON request and response bodies. :class:`RestCatalog` is the client
(:mod:`frazil.catalog.rest.catalog`; its HTTP session in ``_http``, authentication in
:mod:`frazil.catalog.rest.auth`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from frazil.catalog.rest.catalog import RestCatalog

__all__ = ["RestCatalog"]


def __getattr__(name: str) -> Any:
    # Lazy: the server imports the protocol module without the client's HTTP stack.
    if name == "RestCatalog":
        from frazil.catalog.rest.catalog import RestCatalog

        return RestCatalog
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
