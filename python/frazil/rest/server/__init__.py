"""``frazil serve``: the Iceberg REST catalog protocol over any frazil catalog (the embedded
SQLite default, PostgreSQL, the file-system catalog), for Java, pyiceberg, DuckDB and frazil
clients alike (the REST Catalog OpenAPI of Apache Iceberg 1.10.2).

Embed it with :func:`app` (an ASGI application) or run it with :func:`serve` (uvicorn)::

    from frazil.rest.server import app
    application = app(frazil.load_catalog("default"), token="secret")

Everything is stored through the catalog's own methods: commits by requirements
(:meth:`frazil.catalog.Catalog.commit_updates`, each requirement validated against the current
metadata and the pointer swapped by the catalog's compare-and-swap), multi-table transactions
(atomic on the SQL catalog, refused for several tables elsewhere), views on the SQL catalog.
``X-Iceberg-Access-Delegation`` is ignored: the server vends no credentials, its table
``config`` is empty. Needs the ``server`` extra (``pip install 'frazil[server]'``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from frazil.errors import MissingDependencyError

if TYPE_CHECKING:
    from frazil.catalog import Catalog
    from frazil.rest.server.app import RestApp

__all__ = ["app", "serve"]


def _require_stack() -> None:
    try:
        import anyio  # noqa: F401
        import starlette  # noqa: F401
    except ImportError as error:
        raise MissingDependencyError(
            f"frazil's REST server needs starlette and uvicorn ({error}): "
            "pip install 'frazil[server]'"
        ) from None


def app(
    catalog: Catalog,
    *,
    token: str | None = None,
    clients: Mapping[str, str] | None = None,
    prefix: str | None = None,
    token_ttl_s: int = 3600,
    max_body_bytes: int = 32 * 1024 * 1024,
    threads: int = 32,
    page_size: int = 1000,
    plan_tasks_per_page: int = 1000,
    allow_external_locations: bool = False,
    defaults: Mapping[str, str] | None = None,
    overrides: Mapping[str, str] | None = None,
    debug: bool = False,
) -> RestApp:
    """The REST catalog over ``catalog`` as an ASGI application.

    Authentication is off unless ``token`` (a static bearer token) or ``clients`` (OAuth2
    client id -> secret, for the ``/v1/oauth/tokens`` client-credentials grant; tokens expire
    after ``token_ttl_s``) is given; then every route but config and tokens needs a valid
    bearer token (401 otherwise). ``prefix`` puts the catalog routes under ``/v1/<prefix>/``
    (sent to clients in the config overrides). A table, namespace or view location, and the
    ``write.*.path`` properties, must lie under the catalog's warehouse unless
    ``allow_external_locations``. ``debug`` adds stacks to 5xx error bodies."""
    _require_stack()
    from frazil.catalog.rest import protocol as p
    from frazil.rest.server.app import RestApp, Route, token_handler
    from frazil.rest.server.auth import Auth
    from frazil.rest.server.planning import Planning
    from frazil.rest.server.routes import Service
    from frazil.rest.server.views import Views

    auth = Auth(token, clients, token_ttl_s)
    service = Service(
        catalog,
        prefix=prefix,
        defaults=defaults,
        overrides=overrides,
        allow_external_locations=allow_external_locations,
        page_size=page_size,
    )
    views = Views(service)
    planning = Planning(service, tasks_per_page=plan_tasks_per_page)
    s, v = service, views

    def r(method: str, template: str, handler: Any, body: bool = False) -> Route:
        return Route(method, template, handler, body=body)

    routes = [
        Route("GET", p.CONFIG, s.config, blocking=False, auth=False),
        Route("POST", p.TOKENS, token_handler(auth), blocking=False, auth=False, body=True),
        r("GET", p.NAMESPACES, s.list_namespaces),
        r("POST", p.NAMESPACES, s.create_namespace, True),
        r("GET", p.NAMESPACE, s.load_namespace),
        r("HEAD", p.NAMESPACE, s.namespace_exists),
        r("DELETE", p.NAMESPACE, s.drop_namespace),
        r("POST", p.NAMESPACE_PROPERTIES, s.update_namespace_properties, True),
        r("GET", p.TABLES, s.list_tables),
        r("POST", p.TABLES, s.create_table, True),
        r("GET", p.TABLE, s.load_table),
        r("HEAD", p.TABLE, s.table_exists),
        r("POST", p.TABLE, s.commit_table, True),
        r("DELETE", p.TABLE, s.drop_table),
        r("GET", p.TABLE_CREDENTIALS, s.load_credentials),
        r("POST", p.TABLE_METRICS, s.report_metrics, True),
        r("POST", p.REGISTER, s.register_table, True),
        r("POST", p.RENAME_TABLE, s.rename_table, True),
        r("POST", p.TRANSACTIONS_COMMIT, s.commit_transaction, True),
        r("POST", p.PLAN, planning.plan, True),
        r("GET", p.PLAN_ID, planning.fetch),
        r("DELETE", p.PLAN_ID, planning.cancel),
        r("POST", p.TASKS, planning.tasks, True),
        r("GET", p.VIEWS, v.list_views),
        r("POST", p.VIEWS, v.create_view, True),
        r("GET", p.VIEW, v.load_view),
        r("HEAD", p.VIEW, v.view_exists),
        r("POST", p.VIEW, v.commit_view, True),
        r("DELETE", p.VIEW, v.drop_view),
        r("POST", p.RENAME_VIEW, v.rename_view, True),
    ]
    return RestApp(
        routes,
        auth,
        prefix=service.prefix,
        max_body_bytes=max_body_bytes,
        threads=threads,
        debug=debug,
    )


def serve(
    catalog: Catalog,
    host: str = "127.0.0.1",
    port: int = 8181,
    *,
    log_level: str = "info",
    **options: Any,
) -> None:
    """Serve ``catalog`` with uvicorn until interrupted (``options`` go to :func:`app`)."""
    application = app(catalog, **options)
    try:
        import uvicorn
    except ImportError as error:
        raise MissingDependencyError(
            f"frazil serve needs uvicorn ({error}): pip install 'frazil[server]'"
        ) from None
    uvicorn.run(application, host=host, port=port, log_level=log_level, lifespan="on")
