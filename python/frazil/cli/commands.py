"""The command line's commands over a catalog: namespaces, tables, scans and maintenance."""

from __future__ import annotations

import argparse
import datetime as dt
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from frazil.cli._ddl import parse_partition_spec, parse_schema
from frazil.cli._output import Output
from frazil.errors import ValidationError

if TYPE_CHECKING:
    from frazil.catalog import Catalog
    from frazil.table import Table

__all__ = ["register"]

Handler = Callable[["Catalog", argparse.Namespace, Output], int]


def _pairs(items: Sequence[str] | None, what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValidationError(f"{what} must be KEY=VALUE, got {item!r}")
        out[key] = value
    return out


def _when(text: str | None) -> int | None:
    """Milliseconds from an ISO timestamp (UTC when naive) or an integer of milliseconds."""
    if text is None:
        return None
    if text.lstrip("-").isdigit():
        return int(text)
    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        raise ValidationError(f"not a timestamp (ISO 8601 or milliseconds): {text!r}") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    return int(when.timestamp() * 1000)


def _name(identifier: Sequence[str]) -> str:
    return ".".join(identifier)


# --- namespaces -------------------------------------------------------------------------------


def _ns_list(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    names = catalog.list_namespaces(args.parent or ())
    out.records([{"namespace": _name(n)} for n in names], ["namespace"])
    return 0


def _ns_create(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    catalog.create_namespace(args.namespace, _pairs(args.property, "--property"))
    out.message(f"created namespace {args.namespace}")
    return 0


def _ns_drop(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    catalog.drop_namespace(args.namespace)
    out.message(f"dropped namespace {args.namespace}")
    return 0


def _ns_properties(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    updates = _pairs(args.set, "--set")
    if updates or args.remove:
        catalog.update_namespace_properties(args.namespace, set(args.remove or ()), updates)
    out.value(catalog.load_namespace_properties(args.namespace))
    return 0


# --- tables -----------------------------------------------------------------------------------


def _table_list(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    out.records([{"table": _name(t)} for t in catalog.list_tables(args.namespace)], ["table"])
    return 0


def _table_create(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    schema_text = args.schema
    if schema_text.startswith("@"):
        with open(schema_text[1:], encoding="utf-8") as handle:
            schema_text = handle.read()
    schema = parse_schema(schema_text)
    spec = parse_partition_spec(args.partition_by or "", schema)
    table = catalog.create_table(
        args.table,
        schema,
        location=args.location,
        partition_spec=spec,
        properties=_pairs(args.property, "--property"),
        format_version=args.format_version,
    )
    out.message(f"created {_name(table.identifier)} at {table.location()}")
    return 0


def _describe(table: Table) -> dict[str, Any]:
    current = table.current_snapshot()
    return {
        "table": _name(table.identifier),
        "uuid": table.metadata.table_uuid,
        "format-version": table.format_version,
        "location": table.location(),
        "metadata": table.metadata_location,
        "current-snapshot-id": None if current is None else current.snapshot_id,
        "snapshots": len(table.snapshots()),
        "schema": str(table.schema()),
        "partition-spec": str(table.spec()),
        "sort-order": str(table.sort_order()),
        "properties": dict(table.properties),
    }


def _table_describe(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    info = _describe(catalog.load_table(args.table))
    if out.as_json:
        out.value(info)
    else:
        for key, value in info.items():
            out.message(f"{key:>20}: {value}")
    return 0


def _table_schema(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    schema = catalog.load_table(args.table).schema()
    out.value(schema.to_json() if out.as_json else str(schema))
    return 0


def _table_spec(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    spec = catalog.load_table(args.table).spec()
    out.value(spec.to_json() if out.as_json else str(spec))
    return 0


def _table_properties(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    table = catalog.load_table(args.table)
    updates = _pairs(args.set, "--set")
    if updates or args.remove:
        with table.update_properties() as change:
            for key, value in updates.items():
                change.set(key, value)
            change.remove(*(args.remove or ()))
    out.value(dict(table.properties))
    return 0


def _arrow_records(
    table: Any, columns: Sequence[str] | None = None
) -> tuple[list[dict[str, Any]], list[str]]:
    names = list(columns) if columns else list(table.column_names)
    return table.select(names).to_pylist(), names


def _table_history(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    rows, names = _arrow_records(catalog.load_table(args.table).inspect.history())
    out.records(rows, names)
    return 0


def _table_snapshots(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    snapshots = catalog.load_table(args.table).inspect.snapshots()
    rows, names = _arrow_records(
        snapshots, ["committed_at", "snapshot_id", "parent_id", "operation", "summary"]
    )
    for row in rows:
        summary = dict(row["summary"] or [])
        row["summary"] = ", ".join(
            f"{k}={summary[k]}"
            for k in ("added-records", "deleted-records", "total-records", "total-data-files")
            if k in summary
        )
    out.records(rows, names)
    return 0


def _table_files(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    files = catalog.load_table(args.table).inspect.files()
    rows, names = _arrow_records(
        files, ["content", "file_path", "partition", "record_count", "file_size_in_bytes"]
    )
    out.records(rows, names)
    return 0


def _table_drop(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    catalog.drop_table(args.table, purge=args.purge)
    out.message(f"dropped {args.table}" + (" and its files" if args.purge else ""))
    return 0


def _table_rename(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    catalog.rename_table(args.table, args.to)
    out.message(f"renamed {args.table} to {args.to}")
    return 0


# --- scans and maintenance --------------------------------------------------------------------


def _scan(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    table = catalog.load_table(args.table)
    columns = tuple(c.strip() for c in args.columns.split(",")) if args.columns else ("*",)
    scan = table.scan(
        row_filter=args.filter,
        selected_fields=columns,
        snapshot_id=args.snapshot_id,
        limit=args.limit,
    )
    result = scan.to_arrow()
    rows, names = _arrow_records(result)
    out.records(rows, names, title=f"{result.num_rows} rows")
    return 0


def expire_counts(result: Any) -> dict[str, Any]:
    """An expiry result (frazil.table.maintenance.ExpireSnapshotsResult) as Java's counts."""
    return {
        "dry-run": result.dry_run,
        "expired-snapshots": len(result.expired_snapshot_ids),
        "removed-refs": list(result.removed_refs),
        "deleted-data-files": result.deleted_data_files_count,
        "deleted-position-delete-files": result.deleted_position_delete_files_count,
        "deleted-equality-delete-files": result.deleted_equality_delete_files_count,
        "deleted-manifests": result.deleted_manifests_count,
        "deleted-manifest-lists": result.deleted_manifest_lists_count,
        "deleted-statistics-files": result.deleted_statistics_files_count,
        "failed-deletes": len(result.failed),
    }


def _expire(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    table = catalog.load_table(args.table)
    builder = table.maintenance.expire_snapshots()
    older_than = _when(args.older_than)
    if older_than is not None:
        builder = builder.older_than(older_than)
    if args.retain_last is not None:
        builder = builder.retain_last(args.retain_last)
    with out.progress("expiring snapshots"):
        result = builder.commit(dry_run=args.dry_run)
    out.value(expire_counts(result))
    return 0


def _remove_orphans(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    table = catalog.load_table(args.table)
    with out.progress("listing and removing orphan files"):
        orphans = table.remove_orphan_files(older_than=_when(args.older_than), dry_run=args.dry_run)
    out.records([{"orphan": o} for o in orphans], ["orphan"])
    verb = "would remove" if args.dry_run else "removed"
    out.message(f"{verb} {len(orphans)} orphan files")
    return 0


def _rewrite_manifests(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    table = catalog.load_table(args.table)
    with out.progress("rewriting manifests"):
        table.rewrite_manifests()
    snapshot = table.current_snapshot()
    out.value(dict(snapshot.summary or {}) if snapshot is not None else {})
    return 0


def register(commands: Any) -> None:
    """Add the catalog commands to an argparse subparsers object."""

    def add(parent: Any, name: str, handler: Handler, help: str) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = parent.add_parser(name, help=help)
        parser.set_defaults(handler=handler)
        return parser

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
    p.add_argument("--partition-by", help="e.g. 'day(ts), bucket(16, id), region'")
    p.add_argument("--location")
    p.add_argument("--format-version", type=int, choices=(1, 2, 3))
    p.add_argument("--property", action="append", metavar="KEY=VALUE")
    for name, handler, text in (
        ("describe", _table_describe, "show a table's metadata"),
        ("schema", _table_schema, "show the current schema"),
        ("spec", _table_spec, "show the default partition spec"),
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

    p = add(commands, "scan", _scan, "print a table's rows")
    p.add_argument("table")
    p.add_argument("--filter", help="e.g. \"id < 10 AND name LIKE 'a%%'\"")
    p.add_argument("--columns", help="comma-separated column names")
    p.add_argument("--limit", type=int, default=20)
    p.add_argument("--snapshot-id", type=int)
    p = add(commands, "expire-snapshots", _expire, "expire old snapshots and delete their files")
    p.add_argument("table")
    p.add_argument("--older-than", help="ISO timestamp or ms (default: history.expire.*)")
    p.add_argument("--retain-last", type=int)
    p.add_argument("--dry-run", action="store_true")
    p = add(commands, "remove-orphans", _remove_orphans, "delete files no snapshot references")
    p.add_argument("table")
    p.add_argument("--older-than", help="ISO timestamp or ms (default: 3 days ago)")
    p.add_argument("--dry-run", action="store_true")
    add(
        commands, "rewrite-manifests", _rewrite_manifests, "cluster manifests by partition"
    ).add_argument("table")
