"""``frazil quickstart``: a tour of frazil on the embedded catalog, with timings.

It creates a table partitioned by day, appends a few million generated rows, evolves the
schema, deletes rows, runs a filtered scan and shows how many files the planner pruned,
time-travels to the first snapshot and expires old snapshots. It replaces its own table on
each run, so running it twice works.
"""

from __future__ import annotations

import argparse
import datetime as dt
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

    from frazil.catalog import Catalog
    from frazil.cli._output import Output

__all__ = ["generate_events", "register"]

_SCHEMA = (
    "event_id long not null, ts timestamptz not null, user_id long, country string, "
    "device string, amount decimal(10, 2), duration_s double"
)
_COUNTRIES = ["DE", "FR", "US", "JP", "BR", "IN", "NZ", "KE"]
_DEVICES = ["ios", "android", "web", "tv"]
_START = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
_DAYS = 30


def generate_events(rows: int, first_id: int, seed: int) -> pa.Table:
    """``rows`` events over 30 days of January 2026, generated with vectorized Arrow compute
    (deterministic for a seed)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    def uniform(salt: int) -> pa.Array:
        return pc.random(rows, initializer=seed * 1000 + salt)

    def pick(values: list[str], salt: int) -> pa.Array:
        index = pc.cast(pc.floor(pc.multiply(uniform(salt), len(values))), pa.int32())
        return pa.DictionaryArray.from_arrays(index, pa.array(values)).cast(pa.string())

    start_us = int(_START.timestamp()) * 1_000_000
    span_us = _DAYS * 86_400 * 1_000_000
    offsets = pc.cast(pc.floor(pc.multiply(uniform(1), span_us)), pa.int64())
    ts = pc.add(offsets, start_us).cast(pa.timestamp("us", tz="UTC"))
    amount = pc.round(pc.multiply(uniform(4), 500.0), 2).cast(pa.decimal128(10, 2))
    return pa.table(
        {
            "event_id": pa.array(range(first_id, first_id + rows), pa.int64()),
            "ts": ts,
            "user_id": pc.cast(pc.floor(pc.multiply(uniform(2), 100_000)), pa.int64()),
            "country": pick(_COUNTRIES, 3),
            "device": pick(_DEVICES, 5),
            "amount": amount,
            "duration_s": pc.round(pc.multiply(uniform(6), 3600.0), 3),
        }
    )


class _Tour:
    def __init__(self, out: Output) -> None:
        self.out = out
        self.total = 0.0
        self.steps: list[dict[str, Any]] = []

    @contextmanager
    def step(self, title: str) -> Iterator[Callable[[str], None]]:
        lines: list[str] = []
        started = time.perf_counter()
        yield lines.append
        elapsed = time.perf_counter() - started
        self.total += elapsed
        self.steps.append({"step": title, "ms": round(elapsed * 1000, 1), "notes": lines})
        self.out.message(f"{title:<52} {elapsed * 1000:>9.0f} ms")
        for line in lines:
            self.out.message(f"    {line}")


def _run(catalog: Catalog, args: argparse.Namespace, out: Output) -> int:
    import pyarrow as pa
    import pyarrow.compute as pc

    from frazil.cli._ddl import parse_partition_spec, parse_schema
    from frazil.errors import NotFoundError

    tour = _Tour(out)
    namespace, name = args.namespace, f"{args.namespace}.{args.table}"
    rows = args.rows
    with tour.step(f"prepare catalog {catalog.name!r}") as say:
        if (namespace,) not in catalog.list_namespaces():
            catalog.create_namespace(namespace)
        try:
            catalog.drop_table(name, purge=True)
            say(f"dropped the previous {name}")
        except NotFoundError:
            pass
        schema = parse_schema(_SCHEMA)
        table = catalog.create_table(
            name, schema, partition_spec=parse_partition_spec("day(ts)", schema)
        )
        say(f"created {name} partitioned by day(ts) at {table.location()}")

    batches = 3
    per_batch = rows // batches
    for batch in range(batches):
        data = generate_events(per_batch, batch * per_batch, seed=batch + 1)
        with tour.step(f"append {per_batch:,} rows (batch {batch + 1} of {batches})") as say:
            table.append(data)
            snapshot = table.current_snapshot()
            summary = (snapshot.summary if snapshot is not None else None) or {}
            say(
                f"{summary.get('added-data-files')} files, "
                f"{int(summary.get('added-files-size', 0)) / 1e6:.1f} MB"
            )
    first_snapshot = table.snapshots()[0].snapshot_id

    with tour.step("evolve the schema: add column loyalty_tier") as say:
        with table.update_schema() as update:
            update.add_column("loyalty_tier", "string")
        extra = generate_events(10_000, batches * per_batch, seed=99)
        tiers = pc.if_else(pc.greater(extra["amount"].cast(pa.float64()), 250.0), "gold", "basic")
        table.append(extra.append_column("loyalty_tier", tiers))
        say("appended 10,000 rows that have the new column; older rows read it as null")

    with tour.step("delete rows: country = 'NZ' (copy-on-write)") as say:
        before = table.scan().count()
        table.delete("country = 'NZ'")
        after = table.scan().count()
        say(f"{before - after:,} rows deleted, {after:,} remain")

    with tour.step("delete a whole day: ts < '2026-01-02T00:00:00+00:00'") as say:
        table.delete("ts < '2026-01-02T00:00:00+00:00'")
        say("whole files dropped from metadata, no data rewritten")

    query = (
        "ts >= '2026-01-20T00:00:00+00:00' AND ts < '2026-01-23T00:00:00+00:00' AND device = 'tv'"
    )
    with tour.step("filtered scan: 3 days, device = 'tv'") as say:
        total_files = len(list(table.scan().plan_files()))
        scan = table.scan(row_filter=query)
        planned = len(list(scan.plan_files()))
        result = scan.to_arrow()
        say(f"planner kept {planned} of {total_files} data files ({total_files - planned} pruned)")
        say(f"{result.num_rows:,} rows, spending {pc.sum(result['amount']).as_py()}")

    with tour.step("time travel to the first snapshot") as say:
        old = table.scan(snapshot_id=first_snapshot).count()
        say(f"snapshot {first_snapshot} had {old:,} rows; now {table.scan().count():,}")

    with tour.step("expire snapshots, keeping the last 2") as say:
        snapshots_before = len(table.snapshots())
        expired = table.expire_snapshots(older_than=dt.datetime.now(dt.timezone.utc), retain_last=2)
        say(
            f"{snapshots_before} snapshots -> {len(table.snapshots())}; deleted "
            f"{expired.deleted_data_files_count} data files, {expired.deleted_manifests_count} "
            f"manifests, {expired.deleted_manifest_lists_count} manifest lists"
        )

    out.message(f"{'total':<52} {tour.total * 1000:>9.0f} ms")
    out.message(f"\nTry: frazil scan {name} --filter \"country = 'DE'\" --limit 5")
    if out.as_json:
        out.value({"table": name, "steps": tour.steps, "total-ms": round(tour.total * 1000, 1)})
    return 0


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "quickstart", help="create, fill, evolve, query and maintain a sample table"
    )
    parser.add_argument("--rows", type=int, default=3_000_000, help="rows to generate")
    parser.add_argument("--namespace", default="quickstart")
    parser.add_argument("--table", default="events")
    parser.set_defaults(handler=_run)
