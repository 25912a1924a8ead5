"""The command line's commands over a catalog: namespaces and tables (scans and maintenance
are in :mod:`frazil.cli._data`). Registering them imports nothing heavy; each handler imports
what it needs."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from frazil.cli import _changes, _data
from frazil.errors import ValidationError

if TYPE_CHECKING:
    from frazil.catalog import Catalog
    from frazil.cli._output import Output
    from frazil.table import Table

__all__ = ["pairs", "register"]

Handler = Callable[["Catalog", argparse.Namespace, "Output"], int]


def pairs(items: Sequence[str] | None, what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValidationError(f"{what} must be KEY=VALUE, got {item!r}")
        out[key] = value
    return out


def _name(identifier: Sequence[str]) -> str:
    return ".".join(identifier)


# --- namespaces -------------------------------------------------------------------------------


def _ns_list(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    names = catalog.list_namespaces(args.parent or ())
    out.records([{"namespace": _name(n)} for n in names], ["namespace"])
    return 0


def _ns_create(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    catalog.create_namespace(args.namespace, pairs(args.property, "--property"))
    out.value({"namespace": args.namespace, "created": True}, f"created namespace {args.namespace}")
    return 0


def _ns_drop(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    catalog.drop_namespace(args.namespace)
    out.value({"namespace": args.namespace, "dropped": True}, f"dropped namespace {args.namespace}")
    return 0


def _ns_properties(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    updates = pairs(args.set, "--set")
    if updates or args.remove:
        catalog.update_namespace_properties(args.namespace, set(args.remove or ()), updates)
    out.value(dict(sorted(catalog.load_namespace_properties(args.namespace).items())))
    return 0


# --- tables -----------------------------------------------------------------------------------


def _table_list(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    out.records([{"table": _name(t)} for t in catalog.list_tables(args.namespace)], ["table"])
    return 0


def _schema_text(argument: str) -> str:
    """``--schema``: the text itself, or ``@path`` for a file's content."""
    if not argument.startswith("@"):
        return argument
    path = argument[1:]
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else error
        raise ValidationError(f"cannot read the schema file {path!r}: {reason}") from None


def _table_create(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    from frazil.cli._ddl import parse_partition_spec, parse_schema

    schema = parse_schema(_schema_text(args.schema))
    spec = parse_partition_spec(args.partition_by or "", schema)
    table = catalog.create_table(
        args.table,
        schema,
        location=args.location,
        partition_spec=spec,
        properties=pairs(args.property, "--property"),
        format_version=args.format_version,
    )
    out.value(
        {
            "table": _name(table.identifier),
            "location": table.location(),
            "metadata-location": table.metadata_location,
        },
        f"created {_name(table.identifier)} at {table.location()}",
    )
    return 0


def _describe(table: Table) -> dict[str, Any]:
    """A table's metadata; schema, spec and sort order as their Iceberg JSON objects."""
    current = table.current_snapshot()
    return {
        "table": _name(table.identifier),
        "table-uuid": table.metadata.table_uuid,
        "format-version": table.format_version,
        "location": table.location(),
        "metadata-location": table.metadata_location,
        "last-updated-ms": table.metadata.last_updated_ms,
        "current-snapshot-id": None if current is None else current.snapshot_id,
        "snapshot-count": len(table.snapshots()),
        "schema": table.schema().to_json(),
        "partition-spec": table.spec().to_json(),
        "sort-order": table.sort_order().to_json(),
        "properties": dict(table.properties),
    }


def _table_describe(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    table = catalog.load_table(args.table)
    info = _describe(table)
    if out.as_json:
        out.value(info)
        return 0
    shown = {
        **info,
        "schema": str(table.schema()),
        "partition-spec": str(table.spec()),
        "sort-order": str(table.sort_order()),
        "properties": ", ".join(f"{k}={v}" for k, v in sorted(table.properties.items())),
    }
    for key, value in shown.items():
        text = "none" if value is None else str(value).replace("\n", "\n" + " " * 22)
        out.message(f"{key:>20}: {text}")
    return 0


def _table_schema(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    schema = catalog.load_table(args.table).schema()
    out.value(schema.to_json(), str(schema))
    return 0


def _table_spec(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    spec = catalog.load_table(args.table).spec()
    out.value(spec.to_json(), str(spec))
    return 0


def _table_sort_order(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    order = catalog.load_table(args.table).sort_order()
    out.value(order.to_json(), str(order))
    return 0


def _table_properties(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    table = catalog.load_table(args.table)
    updates = pairs(args.set, "--set")
    if updates or args.remove:
        with table.update_properties() as change:
            for key, value in updates.items():
                change.set(key, value)
            change.remove(*(args.remove or ()))
    out.value(dict(sorted(table.properties.items())))
    return 0


def _ms(when: Any) -> int:
    """A datetime from an inspect table as milliseconds from the epoch."""
    from frazil.table._table import timestamp_ms

    return timestamp_ms(when)


def _table_history(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    from frazil.cli._time import describe_ms

    history = catalog.load_table(args.table).inspect.history().to_pylist()
    # Iceberg's snapshot-log keys (timestamp-ms, snapshot-id), then the inspect table's others.
    rows = [
        {
            "timestamp-ms": _ms(row["made_current_at"]),
            "snapshot-id": row["snapshot_id"],
            "parent-id": row["parent_id"],
            "is-current-ancestor": row["is_current_ancestor"],
        }
        for row in history
    ]
    if out.as_json:
        out.value(rows)
    else:
        for row in rows:
            row["made-current-at"] = describe_ms(row["timestamp-ms"])
        out.records(rows, ["made-current-at", "snapshot-id", "parent-id", "is-current-ancestor"])
    return 0


_SHORT_SUMMARY = ("added-records", "deleted-records", "total-records", "total-data-files")


def _table_snapshots(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    from frazil.cli._time import describe_ms

    snapshots = catalog.load_table(args.table).snapshots()
    if out.as_json:
        # Each snapshot in Iceberg's JSON form; its summary is Iceberg's string map.
        out.value([s.to_json() for s in snapshots])
        return 0
    rows = []
    for snapshot in snapshots:
        summary = snapshot.summary or {}
        rows.append(
            {
                "committed-at": describe_ms(snapshot.timestamp_ms),
                "snapshot-id": snapshot.snapshot_id,
                "parent-id": snapshot.parent_snapshot_id,
                "operation": snapshot.operation,
                "summary": ", ".join(f"{k}={summary[k]}" for k in _SHORT_SUMMARY if k in summary),
            }
        )
    out.records(rows, ["committed-at", "snapshot-id", "parent-id", "operation", "summary"])
    return 0


# The content codes of data_file.content (spec: Manifests), named as Iceberg's REST JSON does.
_CONTENT = {0: "data", 1: "position-deletes", 2: "equality-deletes"}
_FILE_COLUMNS = {
    "content": "content",
    "file_path": "file-path",
    "file_format": "file-format",
    "spec_id": "spec-id",
    "partition": "partition",
    "record_count": "record-count",
    "file_size_in_bytes": "file-size-in-bytes",
}


def _table_files(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    from frazil.cli._output import arrow_rows

    files = catalog.load_table(args.table).inspect.files()
    names = [c for c in _FILE_COLUMNS if c in files.column_names]
    rows = [
        {_FILE_COLUMNS[k]: _CONTENT.get(v, v) if k == "content" else v for k, v in row.items()}
        for row in arrow_rows(files, columns=names)
    ]
    out.records(rows, [_FILE_COLUMNS[c] for c in names])
    return 0


def _table_drop(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    catalog.drop_table(args.table, purge=args.purge)
    out.value(
        {"table": args.table, "dropped": True, "purged": args.purge},
        f"dropped {args.table}" + (" and its files" if args.purge else ""),
    )
    return 0


def _table_rename(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    catalog.rename_table(args.table, args.to)
    out.value({"from": args.table, "to": args.to}, f"renamed {args.table} to {args.to}")
    return 0


def _add(parent: Any, name: str, handler: Handler, help: str) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = parent.add_parser(name, help=help, description=help)
    parser.set_defaults(handler=handler)
    return parser


def register(commands: Any) -> None:
    """Add the catalog commands to an argparse subparsers object."""
    add = _add
    ns = commands.add_parser("namespace", aliases=["ns"], help="namespaces").add_subparsers(
        dest="action", required=True
    )
    add(ns, "list", _ns_list, "list namespaces").add_argument("parent", nargs="?")
    p = add(ns, "create", _ns_create, "create a namespace")
    p.add_argument("namespace")
    p.add_argument("--property", action="append", metavar="KEY=VALUE")
    add(ns, "drop", _ns_drop, "drop an empty namespace").add_argument("namespace")
    p = add(ns, "properties", _ns_properties, "show (and set or remove) properties")
    p.add_argument("namespace")
    p.add_argument("--set", action="append", metavar="KEY=VALUE")
    p.add_argument("--remove", action="append", metavar="KEY")

    tables = commands.add_parser("table", help="tables").add_subparsers(
        dest="action", required=True
    )
    add(tables, "list", _table_list, "list a namespace's tables").add_argument("namespace")
    p = add(tables, "create", _table_create, "create a table")
    p.add_argument("table")
    p.add_argument(
        "--schema",
        required=True,
        help="schema JSON, 'id long not null, name string, ...', or @file",
    )
    p.add_argument(
        "--partition-by",
        help="e.g. 'day(ts), bucket[16](id), region' (Spark's 'days(ts), bucket(16, id)' too)",
    )
    p.add_argument("--location")
    p.add_argument("--format-version", type=int, choices=(1, 2, 3))
    p.add_argument("--property", action="append", metavar="KEY=VALUE")
    for name, handler, text in (
        ("describe", _table_describe, "show a table's metadata"),
        ("schema", _table_schema, "show the current schema"),
        ("spec", _table_spec, "show the default partition spec"),
        ("sort-order", _table_sort_order, "show the default sort order"),
        ("history", _table_history, "show the snapshot log"),
        ("snapshots", _table_snapshots, "list snapshots"),
        ("files", _table_files, "list the current snapshot's files"),
    ):
        add(tables, name, handler, text).add_argument("table")
    p = add(tables, "properties", _table_properties, "show (and set or remove) properties")
    p.add_argument("table")
    p.add_argument("--set", action="append", metavar="KEY=VALUE")
    p.add_argument("--remove", action="append", metavar="KEY")
    p = add(tables, "drop", _table_drop, "drop a table")
    p.add_argument("table")
    p.add_argument("--purge", action="store_true", help="also delete its files")
    p = add(tables, "rename", _table_rename, "rename a table")
    p.add_argument("table")
    p.add_argument("to")

    _data.register(commands, add)
    _changes.register(commands, add)
