"""The ``frazil`` command line: ``frazil [--catalog NAME] [--json] COMMAND ...``.

The catalog comes from ``--catalog`` (default ``default``) through :func:`frazil.load_catalog`,
so ``~/.frazil.yaml``, ``FRAZIL_CONFIG`` and ``FRAZIL_CATALOG__*`` variables configure it;
with no configuration it is the embedded SQLite catalog under ``./frazil-warehouse``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import frazil
from frazil.cli import commands, quickstart
from frazil.cli._output import Output
from frazil.errors import FrazilError

if TYPE_CHECKING:
    from frazil.catalog import Catalog

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="frazil", description="A Rust-accelerated implementation of Apache Iceberg."
    )
    parser.add_argument("--version", action="version", version=f"frazil {frazil.__version__}")
    parser.add_argument("--catalog", default="default", help="catalog name (default: default)")
    parser.add_argument(
        "--property", action="append", metavar="KEY=VALUE", help="a catalog property"
    )
    parser.add_argument("--json", action="store_true", help="print JSON for scripts")
    subcommands = parser.add_subparsers(dest="command", required=True)
    subcommands.add_parser(
        "demo", help="print the version and apply each transform to sample data"
    ).set_defaults(handler=None)
    commands.register(subcommands)
    quickstart.register(subcommands)
    return parser


def main(
    argv: Sequence[str] | None = None,
    *,
    catalog_factory: Callable[[str, dict[str, str]], Catalog] | None = None,
) -> int:
    """Run the command line; returns the exit status. ``catalog_factory`` replaces
    :func:`frazil.load_catalog` (tests)."""
    parser = _parser()
    args = parser.parse_args(argv)
    out = Output(args.json)
    try:
        if args.command == "demo":
            from frazil.cli.demo import demo

            return demo()
        properties = commands._pairs(args.property, "--property")
        if catalog_factory is None:
            catalog = frazil.load_catalog(args.catalog, **properties)
        else:
            catalog = catalog_factory(args.catalog, properties)
        status: int = args.handler(catalog, args, out)
        return status
    except FrazilError as error:
        print(f"frazil: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
