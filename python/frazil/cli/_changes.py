"""The commands that change rows or compact files: ``delete``, ``upsert``,
``rewrite-data-files``, ``rewrite-position-deletes``. Heavy modules are imported inside the
handlers."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from frazil.errors import ValidationError

if TYPE_CHECKING:
    from frazil.catalog import Catalog
    from frazil.cli._output import Output
    from frazil.table import Table

__all__ = ["register"]

# The snapshot summary counts a row-level commit reports, in this order.
_SUMMARY_COUNTS = (
    "deleted-data-files",
    "added-data-files",
    "added-delete-files",
    "removed-delete-files",
    "added-dvs",
    "removed-dvs",
    "deleted-records",
    "added-records",
    "added-position-deletes",
    "added-equality-deletes",
)


def _commit_counts(table: Table, before: int | None) -> dict[str, Any]:
    """The new snapshot's id, operation and counts (a commit that changed nothing: nulls)."""
    snapshot = table.current_snapshot()
    if snapshot is None or snapshot.snapshot_id == before:
        return {"snapshot-id": None, "operation": None}
    summary = snapshot.summary or {}
    out: dict[str, Any] = {"snapshot-id": snapshot.snapshot_id, "operation": snapshot.operation}
    for key in _SUMMARY_COUNTS:
        out[key] = int(summary.get(key, "0"))
    return out


def _head(table: Table) -> int | None:
    snapshot = table.current_snapshot()
    return None if snapshot is None else snapshot.snapshot_id


def _delete(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    table = catalog.load_table(args.table)
    before = _head(table)
    with out.progress("deleting rows"):
        table.delete(args.filter)
    counts = _commit_counts(table, before)
    if counts["snapshot-id"] is None:
        out.value(counts, "no row matched: nothing committed")
    else:
        out.value(counts)
    return 0


def _read_data(path: str, data_format: str | None, table: Table) -> Any:
    """The rows of ``path`` (Parquet, CSV with a header, or newline-delimited JSON), with the
    table's column types where the file's differ (CSV and JSON types are inferred)."""
    import pyarrow as pa

    from frazil.table.read import read_task_schema

    kind = (data_format or Path(path).suffix.lstrip(".")).lower()
    if not Path(path).is_file():
        raise ValidationError(f"--data {path!r}: no such file")
    try:
        if kind in ("parquet", "pq"):
            import pyarrow.parquet as pq

            data = pq.read_table(path)
        elif kind == "csv":
            import pyarrow.csv as csv

            data = csv.read_csv(path)
        elif kind in ("json", "jsonl", "ndjson"):
            import pyarrow.json as js

            data = js.read_json(path)
        else:
            raise ValidationError(
                f"--data {path!r}: unknown format {kind!r}; give --format parquet, csv or json"
            )
    except (pa.ArrowInvalid, OSError) as error:
        raise ValidationError(f"--data {path!r}: cannot read it as {kind}: {error}") from None
    target = read_task_schema(table.schema())
    columns = []
    for name in data.column_names:
        values = data.column(name)
        if name in target.names:
            wanted = target.field(name).type
            if values.type != wanted and not isinstance(wanted, pa.BaseExtensionType):
                try:
                    values = values.cast(wanted)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as error:
                    raise ValidationError(
                        f"--data {path!r}: column {name!r} ({values.type}) does not convert to "
                        f"the table's {wanted}: {error}"
                    ) from None
        columns.append(values)
    return pa.table(columns, names=data.column_names)


def _upsert(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    table = catalog.load_table(args.table)
    data = _read_data(args.data, args.format, table)
    join = None if args.on is None else [c.strip() for c in args.on.split(",") if c.strip()]
    before = _head(table)
    with out.progress("upserting rows"):
        result = table.upsert(
            data,
            join_cols=join,
            when_matched_update_all=not args.no_update,
            when_not_matched_insert_all=not args.no_insert,
        )
    counts = _commit_counts(table, before)
    out.value(
        {
            "rows-updated": result.rows_updated,
            "rows-inserted": result.rows_inserted,
            "snapshot-id": counts["snapshot-id"],
            "operation": counts["operation"],
        }
    )
    return 0


def _options(items: list[str] | None) -> dict[str, str]:
    from frazil.cli.commands import pairs

    return pairs(items, "--option")


def _rewrite_data_files(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    table = catalog.load_table(args.table)
    result = table.maintenance.rewrite_data_files(
        args.strategy,
        _options(args.option),
        args.filter,
        sort_order=args.sort_order,
        progress=False if out.as_json else None,
    )
    out.value(
        {
            "rewritten-data-files-count": result.rewritten_data_files_count,
            "added-data-files-count": result.added_data_files_count,
            "rewritten-bytes-count": result.rewritten_bytes_count,
            "failed-data-files-count": result.failed_data_files_count,
            "removed-delete-files-count": result.removed_delete_files_count,
            "groups": len(result.rewrite_results),
            "failed-groups": len(result.rewrite_failures),
        }
    )
    return 0


def _rewrite_position_deletes(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    table = catalog.load_table(args.table)
    result = table.maintenance.rewrite_position_delete_files(
        _options(args.option), args.filter, progress=False if out.as_json else None
    )
    out.value(
        {
            "rewritten-delete-files-count": result.rewritten_delete_files_count,
            "added-delete-files-count": result.added_delete_files_count,
            "rewritten-bytes-count": result.rewritten_bytes_count,
            "added-bytes-count": result.added_bytes_count,
            "groups": len(result.rewrite_results),
        }
    )
    return 0


def register(commands: Any, add: Any) -> None:
    """Add the row-level commands; ``add(parent, name, handler, help)`` makes a parser."""
    p = add(commands, "delete", _delete, "delete the rows matching a filter (write.delete.mode)")
    p.add_argument("table")
    p.add_argument("--filter", required=True, help="e.g. \"id < 10 AND ts < '2024-01-01'\"")
    p = add(
        commands,
        "upsert",
        _upsert,
        "update rows whose keys match, insert the others (write.merge.mode)",
    )
    p.add_argument("table")
    p.add_argument(
        "--data", required=True, help="a Parquet, CSV (with a header) or JSON-lines file"
    )
    p.add_argument("--format", choices=("parquet", "csv", "json"), help="default: from the suffix")
    p.add_argument("--on", help="comma-separated join columns (default: the identifier fields)")
    p.add_argument("--no-update", action="store_true", help="insert new keys only")
    p.add_argument("--no-insert", action="store_true", help="update matching keys only")
    p = add(
        commands,
        "rewrite-data-files",
        _rewrite_data_files,
        "compact data files, deletes applied (Java's rewrite_data_files)",
    )
    p.add_argument("table")
    p.add_argument("--strategy", choices=("binpack", "sort"), default="binpack")
    p.add_argument(
        "--option",
        action="append",
        metavar="KEY=VALUE",
        help="a Java option, e.g. target-file-size-bytes=134217728 or min-input-files=2",
    )
    p.add_argument("--filter", help="rewrite only files that may hold rows matching it")
    p.add_argument("--sort-order", help='sort strategy: e.g. "id DESC NULLS LAST, ts"')
    p = add(
        commands,
        "rewrite-position-deletes",
        _rewrite_position_deletes,
        "compact position deletes, dropping dangling ones (v3: into deletion vectors)",
    )
    p.add_argument("table")
    p.add_argument("--option", action="append", metavar="KEY=VALUE", help="a Java option")
    p.add_argument("--filter", help="rewrite only deletes of partitions this may match")
