"""The Iceberg REST catalog protocol (the REST Catalog OpenAPI of Apache Iceberg 1.10.2).

:mod:`frazil.catalog.rest.protocol` holds what the client and the server (``frazil serve``,
:mod:`frazil.rest.server`) share: routes, endpoint names, namespace encoding, the error model
and the JSON request and response bodies.
"""
