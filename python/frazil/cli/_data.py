"""The commands that read a table's data or maintain it: ``scan``, ``expire-snapshots``,
``remove-orphans``, ``rewrite-manifests``. Heavy modules are imported inside the handlers."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from frazil.cli._time import DURATION_HELP, describe_ms, duration_text, now_ms, parse_when
from frazil.errors import ValidationError

if TYPE_CHECKING:
    from frazil.catalog import Catalog
    from frazil.cli._output import Output
    from frazil.table import Table

__all__ = ["DEFAULT_LIMIT", "expire_counts", "register"]

DEFAULT_LIMIT = 20


def _rows(n: int) -> str:
    return f"{n:,} row{'' if n == 1 else 's'}"


def _scan(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    from frazil.cli._output import arrow_rows

    if args.limit < 0:
        raise ValidationError(f"--limit must be 0 (all rows) or more, got {args.limit}")
    limit = args.limit or None
    table = catalog.load_table(args.table)
    columns = tuple(c.strip() for c in args.columns.split(",")) if args.columns else ("*",)
    as_of = None if args.as_of is None else parse_when(args.as_of, "--as-of")
    scan = table.scan(
        row_filter=args.filter,
        selected_fields=columns,
        snapshot_id=args.snapshot_id,
        ref=args.ref,
        as_of=as_of,
        # One row more than shown tells whether rows were left out, without counting them all.
        limit=None if limit is None else limit + 1,
    )
    result = scan.to_arrow()
    more = limit is not None and result.num_rows > limit
    if more:
        result = result.slice(0, limit)
    rows = arrow_rows(result, scan.projection())
    shown = _rows(result.num_rows)
    if more:
        shown = f"showing the first {shown}; more match (--limit N for more, --limit 0 for all)"
    out.records(rows, result.column_names)
    if more or not out.as_json:
        out.note(shown)
    return 0


def expire_counts(result: Any) -> dict[str, Any]:
    """An expiry result (frazil.table.maintenance.ExpireSnapshotsResult) as Java's counts."""
    return {
        "dry-run": result.dry_run,
        "expired-snapshots": len(result.expired_snapshot_ids),
        "expired-snapshot-ids": list(result.expired_snapshot_ids),
        "removed-refs": list(result.removed_refs),
        "deleted-data-files": result.deleted_data_files_count,
        "deleted-position-delete-files": result.deleted_position_delete_files_count,
        "deleted-equality-delete-files": result.deleted_equality_delete_files_count,
        "deleted-manifests": result.deleted_manifests_count,
        "deleted-manifest-lists": result.deleted_manifest_lists_count,
        "deleted-statistics-files": result.deleted_statistics_files_count,
        "failed-deletes": len(result.failed),
    }


def _nothing_expired(
    table: Table, cutoff_ms: int, age_source: str, keep: int, keep_source: str
) -> str:
    """Why an expiry removed nothing, by the rule that kept the snapshots (spec: "Snapshot
    Retention Policy")."""
    snapshots = table.snapshots()
    cutoff = f"the cutoff {describe_ms(cutoff_ms)} ({age_source})"
    if not snapshots:
        return "nothing expired: the table has no snapshots"
    if len(snapshots) <= keep:
        count = f"{len(snapshots)} snapshot{'s' if len(snapshots) > 1 else ''}"
        return (
            f"nothing expired: the table has {count}, and the newest {keep} of a branch are "
            f"always kept ({keep_source})"
        )
    if min(s.timestamp_ms for s in snapshots) >= cutoff_ms:
        return (
            f"nothing expired: every snapshot is younger than {cutoff}; to expire sooner, "
            "pass --older-than with a shorter duration (e.g. 1h) or a timestamp"
        )
    return (
        f"nothing expired: the snapshots older than {cutoff} are kept as the newest {keep} of "
        f"a branch ({keep_source}), by a branch's or tag's own retention, or by a tag"
    )


def _expire(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    from frazil.table._properties import int_property
    from frazil.table.maintenance.retention import (
        MAX_SNAPSHOT_AGE_MS,
        MAX_SNAPSHOT_AGE_MS_DEFAULT,
        MIN_SNAPSHOTS_TO_KEEP,
        MIN_SNAPSHOTS_TO_KEEP_DEFAULT,
    )

    table = catalog.load_table(args.table)
    builder = table.maintenance.expire_snapshots()
    now = now_ms()
    properties = table.properties
    if args.older_than is not None:
        cutoff = parse_when(args.older_than, "--older-than", now)
        builder = builder.older_than(cutoff)
        age_source = f"--older-than {args.older_than}"
    else:
        # The table's default cutoff, as the expiry computes it (retention.plan_retention).
        max_age = int_property(properties, MAX_SNAPSHOT_AGE_MS, MAX_SNAPSHOT_AGE_MS_DEFAULT)
        cutoff = now - max_age
        default = "" if MAX_SNAPSHOT_AGE_MS in properties else ", the default"
        age_source = f"{MAX_SNAPSHOT_AGE_MS} = {duration_text(max_age)}{default}"
    if args.retain_last is not None:
        builder = builder.retain_last(args.retain_last)
        keep = args.retain_last
        keep_source = f"--retain-last {keep}"
    else:
        keep = int_property(properties, MIN_SNAPSHOTS_TO_KEEP, MIN_SNAPSHOTS_TO_KEEP_DEFAULT)
        default = "" if MIN_SNAPSHOTS_TO_KEEP in properties else ", the default"
        keep_source = f"{MIN_SNAPSHOTS_TO_KEEP} = {keep}{default}; --retain-last N to change"
    with out.progress("expiring snapshots"):
        result = builder.commit(dry_run=args.dry_run)
    counts = expire_counts(result)
    reason = None
    if not result.expired_snapshot_ids:
        reason = _nothing_expired(table, cutoff, age_source, keep, keep_source)
    counts.update({"older-than-ms": cutoff, "retain-last": keep, "reason": reason})
    if out.as_json:
        out.value(counts)
    else:
        out.value({k: v for k, v in counts.items() if k != "reason"})
        if reason is not None:
            out.message(reason)
    return 0


def _remove_orphans(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    table = catalog.load_table(args.table)
    older_than = None if args.older_than is None else parse_when(args.older_than, "--older-than")
    with out.progress("listing and removing orphan files"):
        orphans = table.remove_orphan_files(older_than=older_than, dry_run=args.dry_run)
    if out.as_json:
        out.value({"dry-run": args.dry_run, "orphan-files": list(orphans)})
        return 0
    out.records([{"orphan": o} for o in orphans], ["orphan"])
    verb = "would remove" if args.dry_run else "removed"
    out.message(f"{verb} {len(orphans)} orphan file{'' if len(orphans) == 1 else 's'}")
    return 0


def _rewrite_manifests(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    table = catalog.load_table(args.table)
    with out.progress("rewriting manifests"):
        result = table.maintenance.rewrite_manifests()
    out.value(
        {
            "snapshot-id": result.snapshot_id,
            "rewritten-manifests": len(result.rewritten_manifests),
            "added-manifests": len(result.added_manifests),
            "entries-processed": result.entries_processed,
        }
    )
    return 0


def register(commands: Any, add: Any) -> None:
    """Add the data commands; ``add(parent, name, handler, help)`` makes a parser."""
    p = add(commands, "scan", _scan, "print a table's rows")
    p.add_argument("table")
    p.add_argument("--filter", help="e.g. \"id < 10 AND name LIKE 'a%%'\"")
    p.add_argument("--columns", help="comma-separated column names")
    p.add_argument(
        "--limit",
        type=int,
        default=DEFAULT_LIMIT,
        help=f"rows to show (default: {DEFAULT_LIMIT}; 0 for all)",
    )
    when = p.add_mutually_exclusive_group()
    when.add_argument("--snapshot-id", type=int, help="read this snapshot")
    when.add_argument("--ref", help="read this branch or tag")
    when.add_argument("--as-of", help=f"read the snapshot current at {DURATION_HELP}")
    p = add(commands, "expire-snapshots", _expire, "expire old snapshots and delete their files")
    p.add_argument("table")
    p.add_argument(
        "--older-than",
        help=f"{DURATION_HELP}; default: the table's history.expire.max-snapshot-age-ms "
        "(5 days unless set)",
    )
    p.add_argument(
        "--retain-last",
        type=int,
        help="snapshots of each branch to keep; default: history.expire.min-snapshots-to-keep "
        "(1 unless set)",
    )
    p.add_argument("--dry-run", action="store_true")
    p = add(commands, "remove-orphans", _remove_orphans, "delete files no snapshot references")
    p.add_argument("table")
    p.add_argument("--older-than", help=f"{DURATION_HELP}; default: 3 days ago")
    p.add_argument("--dry-run", action="store_true")
    add(
        commands, "rewrite-manifests", _rewrite_manifests, "cluster manifests by partition"
    ).add_argument("table")
