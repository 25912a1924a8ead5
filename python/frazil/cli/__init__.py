"""The ``frazil`` command line: ``frazil [--catalog NAME] [--json] COMMAND ...``.

The catalog comes from ``--catalog`` (default ``default``) through :func:`frazil.load_catalog`,
so ``~/.frazil.yaml``, ``FRAZIL_CONFIG`` and ``FRAZIL_CATALOG__*`` variables configure it;
with no configuration it is the embedded SQLite catalog under ``./frazil-warehouse``.

``--json`` and ``--catalog`` may come before or after the command. Importing this module and
building the parser import nothing heavy (no pyarrow): ``frazil --help`` and ``--version``
answer at once, and each command imports what it needs when it runs.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import frazil
from frazil.cli import commands, quickstart, serve
from frazil.errors import FrazilError

if TYPE_CHECKING:
    from frazil.catalog import Catalog

__all__ = ["main"]

_JSON_HELP = (
    "print strict JSON (RFC 8259) for scripts: kebab-case keys, numbers as numbers, NaN and "
    'infinities as the strings "NaN", "Infinity" and "-Infinity"'
)


class _Parser(argparse.ArgumentParser):
    """Every command's parser also accepts the global ``--json`` and ``--catalog``, so they
    may follow the command. Their defaults are suppressed below the top level: a command's
    parser sets them only when given there, over the top level's values."""

    def __init__(self, *args: Any, top: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        default: Any = {} if top else {"default": argparse.SUPPRESS}
        self.add_argument("--json", action="store_true", help=_JSON_HELP, **default)
        self.add_argument(
            "--catalog",
            help="catalog name (default: default)",
            **({"default": "default"} if top else default),
        )


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="frazil",
        description="A Rust-accelerated implementation of Apache Iceberg.",
        epilog="--json and --catalog may also follow the command ('frazil scan db.t --json').",
        top=True,
    )
    parser.add_argument("--version", action="version", version=f"frazil {frazil.__version__}")
    parser.add_argument(
        "--property",
        action="append",
        metavar="KEY=VALUE",
        help="a catalog property (before the command: after it, --property is the new "
        "namespace's or table's)",
    )
    subcommands = parser.add_subparsers(dest="command", required=True)
    subcommands.add_parser(
        "demo", help="print the version and apply each transform to sample data"
    ).set_defaults(handler=None)
    commands.register(subcommands)
    quickstart.register(subcommands)
    serve.register(subcommands)
    return parser


def _one_line(error: BaseException) -> str:
    return "; ".join(line.strip() for line in str(error).splitlines() if line.strip())


def _run(
    argv: Sequence[str] | None, catalog_factory: Callable[[str, dict[str, str]], Catalog] | None
) -> int:
    args = _parser().parse_args(argv)
    from frazil.cli._output import Output

    out = Output(args.json)
    if args.command == "demo":
        from frazil.cli.demo import demo

        return demo(out)
    properties = commands.pairs(args.property, "--property")
    if catalog_factory is None:
        catalog = frazil.load_catalog(args.catalog, **properties)
    else:
        catalog = catalog_factory(args.catalog, properties)
    status: int = args.handler(catalog, args, out)
    # Flushed here, where a closed pipe is caught, rather than at the interpreter's exit.
    sys.stdout.flush()
    return status


def _silence_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so that the interpreter's final flush
    does not fail again (Python's documented idiom, "Note on SIGPIPE")."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass  # stdout is not a file (a test's capture): nothing will flush it at exit.


def main(
    argv: Sequence[str] | None = None,
    *,
    catalog_factory: Callable[[str, dict[str, str]], Catalog] | None = None,
) -> int:
    """Run the command line; returns the exit status. ``catalog_factory`` replaces
    :func:`frazil.load_catalog` (tests).

    No traceback reaches the user: an error is one line on stderr, ``frazil: <what>``, with
    status 1 (2 for a usage error, from argparse; 130 when interrupted). A reader that stops
    early (``frazil scan ... | head``) ends the command quietly with status 141, as SIGPIPE
    would."""
    try:
        return _run(argv, catalog_factory)
    except FrazilError as error:
        print(f"frazil: {_one_line(error)}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        _silence_stdout()
        return 141
    except KeyboardInterrupt:
        print("frazil: interrupted", file=sys.stderr)
        return 130
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        print(f"frazil: {where}{error.strerror or _one_line(error)}", file=sys.stderr)
        return 1
    except BaseException as error:  # the last resort (a Rust panic is a BaseException too)
        if isinstance(error, SystemExit) or os.environ.get("FRAZIL_TRACEBACK"):
            raise
        print(
            f"frazil: internal error: {type(error).__name__}: {_one_line(error)} "
            "(FRAZIL_TRACEBACK=1 shows the traceback; please report it)",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())
