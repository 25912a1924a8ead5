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

One module a part: ``routes``, ``errors``, ``bodies`` (config, namespaces, tables, views,
commits), ``planning`` (server-side scan planning) and ``oauth``; every public name is
re-exported here, so both sides import ``frazil.catalog.rest.protocol``.
"""

from __future__ import annotations

from frazil.catalog.rest.protocol.bodies import *  # noqa: F403
from frazil.catalog.rest.protocol.errors import *  # noqa: F403
from frazil.catalog.rest.protocol.oauth import *  # noqa: F403
from frazil.catalog.rest.protocol.planning import *  # noqa: F403
from frazil.catalog.rest.protocol.routes import *  # noqa: F403
