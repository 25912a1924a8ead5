"""``frazil serve``: the catalog as an Iceberg REST catalog server (:mod:`frazil.rest.server`).

``frazil serve --catalog default --host 127.0.0.1 --port 8181 [--token T]
[--client-id ID --client-secret S | --clients FILE]``. Authentication is off by default, which
is allowed on a loopback address only: another address needs ``--token`` or clients (or
``--no-auth`` to say it on purpose).
"""

from __future__ import annotations

import argparse
import ipaddress
import os
from typing import TYPE_CHECKING, Any

from frazil.errors import ValidationError

if TYPE_CHECKING:
    from frazil.catalog import Catalog
    from frazil.cli._output import Output

__all__ = ["register"]

_TOKEN_VARIABLE = "FRAZIL_SERVE_TOKEN"


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _run(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    from frazil.rest.server import serve
    from frazil.rest.server.auth import load_clients

    clients: dict[str, str] = {}
    if args.clients:
        clients.update(load_clients(args.clients))
    if (args.client_id is None) != (args.client_secret is None):
        raise ValidationError("give --client-id and --client-secret together")
    if args.client_id is not None:
        clients[args.client_id] = args.client_secret
    token = args.token or os.environ.get(_TOKEN_VARIABLE) or None
    if not token and not clients and not args.no_auth and not _loopback(args.host):
        raise ValidationError(
            f"refusing to serve {args.host} without authentication: give --token or OAuth2 "
            "clients (--client-id/--client-secret, --clients), or --no-auth"
        )
    serve(
        catalog,
        args.host,
        args.port,
        log_level=args.log_level,
        token=token,
        clients=clients or None,
        prefix=args.prefix,
        max_body_bytes=args.max_body_bytes,
        threads=args.threads,
        allow_external_locations=args.allow_external_locations,
    )
    return 0


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "serve",
        help="serve the catalog as an Iceberg REST catalog",
        description="Serve the catalog over the Iceberg REST catalog protocol (needs the "
        "server extra: pip install 'frazil[server]').",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8181, help="port (default 8181)")
    parser.add_argument(
        "--token", help=f"a static bearer token clients must send (or ${_TOKEN_VARIABLE})"
    )
    parser.add_argument("--client-id", help="an OAuth2 client for /v1/oauth/tokens")
    parser.add_argument("--client-secret", help="its secret")
    parser.add_argument("--clients", metavar="FILE", help="YAML file: client id -> secret")
    parser.add_argument(
        "--no-auth", action="store_true", help="serve a non-loopback address without auth"
    )
    parser.add_argument("--prefix", help="serve the catalog routes under /v1/<prefix>/")
    parser.add_argument(
        "--max-body-bytes", type=int, default=32 * 1024 * 1024, help="request body limit"
    )
    parser.add_argument(
        "--threads", type=int, default=32, help="catalog calls served at once (default 32)"
    )
    parser.add_argument(
        "--allow-external-locations",
        action="store_true",
        help="let clients place tables outside the catalog's warehouse",
    )
    parser.add_argument(
        "--log-level",
        default="info",
        choices=("critical", "error", "warning", "info", "debug"),
    )
    parser.set_defaults(handler=_run)
