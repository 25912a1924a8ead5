"""Random sequences of appends, deletes (merge-on-read and copy-on-write), updates, upserts,
equality deletes and compactions on a table equal the same operations applied to an in-memory
model (a dict by key), in both modes and both delete-capable format versions (hypothesis
stateful testing)."""

from __future__ import annotations

import tempfile
from typing import Any

import pyarrow as pa
from frazil.catalog.memory import InMemoryCatalog
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

SCHEMA = pa.schema(
    [pa.field("id", pa.int64(), False), pa.field("cat", pa.string()), pa.field("v", pa.int64())]
)
CATS = ("a", "b", "c")
KEYS = st.integers(min_value=0, max_value=40)


def _rows(rows: dict[int, tuple[str | None, int | None]]) -> pa.Table:
    ids = sorted(rows)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "cat": [rows[i][0] for i in ids],
            "v": pa.array([rows[i][1] for i in ids], pa.int64()),
        },
        schema=SCHEMA,
    )


def _in(ids: list[int]) -> str:
    return "id IN (" + ", ".join(str(i) for i in ids) + ")"


class _Machine(RuleBasedStateMachine):
    version = 2
    mode = "merge-on-read"
    partition: tuple[str, str] = ("cat", "identity")

    @initialize()
    def create(self) -> None:
        self.directory = tempfile.TemporaryDirectory()
        catalog = InMemoryCatalog(warehouse=self.directory.name)
        catalog.create_namespace("db")
        mode = self.mode
        self.table = catalog.create_table(
            "db.t",
            SCHEMA,
            properties={
                "format-version": str(self.version),
                "write.delete.mode": mode,
                "write.update.mode": mode,
                "write.merge.mode": mode,
            },
        )
        with self.table.update_spec() as spec:
            spec.add_field(*self.partition)
        self.model: dict[int, tuple[str | None, int | None]] = {}
        self.counter = 0

    def teardown(self) -> None:
        self.directory.cleanup()

    @rule(keys=st.lists(KEYS, min_size=1, max_size=12, unique=True), cat=st.sampled_from(CATS))
    def append(self, keys: list[int], cat: str) -> None:
        fresh = [k for k in keys if k not in self.model]  # keys stay unique
        if not fresh:
            return
        self.counter += 1
        new = {k: (cat, self.counter) for k in fresh}
        self.table.append(_rows(new))
        self.model.update(new)

    @rule(keys=st.lists(KEYS, min_size=1, max_size=8, unique=True))
    def delete_keys(self, keys: list[int]) -> None:
        self.table.delete(_in(keys))
        for k in keys:
            self.model.pop(k, None)

    @rule(low=KEYS, width=st.integers(0, 15))
    def delete_range(self, low: int, width: int) -> None:
        self.table.delete(f"id BETWEEN {low} AND {low + width}")
        for k in [k for k in self.model if low <= k <= low + width]:
            del self.model[k]

    @rule(cat=st.sampled_from(CATS), mode=st.sampled_from(["copy-on-write", "merge-on-read"]))
    def delete_category(self, cat: str, mode: str) -> None:
        with self.table.transaction() as txn:
            txn.set_properties({"write.delete.mode": mode})
            txn.delete(f"cat = '{cat}'")
        for k in [k for k, row in self.model.items() if row[0] == cat]:
            del self.model[k]

    @rule(low=KEYS, width=st.integers(0, 20), value=st.integers(-5, 5) | st.none())
    def update(self, low: int, width: int, value: int | None) -> None:
        self.table.update({"v": value}, f"id BETWEEN {low} AND {low + width}")
        for k, (cat, _) in list(self.model.items()):
            if low <= k <= low + width:
                self.model[k] = (cat, value)

    @rule(
        rows=st.dictionaries(
            KEYS, st.tuples(st.sampled_from(CATS), st.integers(-3, 3)), min_size=1, max_size=10
        )
    )
    def upsert(self, rows: dict[int, tuple[str, int]]) -> None:
        # A key keeps its partition (cat) in an upsert: updating it moves the row.
        result = self.table.upsert(_rows(rows), join_cols=["id"])  # type: ignore[arg-type]
        changed = sum(1 for k, row in rows.items() if k in self.model and self.model[k] != row)
        new = sum(1 for k in rows if k not in self.model)
        assert (result.rows_updated, result.rows_inserted) == (changed, new)
        self.model.update(rows)

    @rule(keys=st.lists(KEYS, min_size=1, max_size=8, unique=True))
    def delete_by_key(self, keys: list[int]) -> None:
        self.table.delete_by_key(pa.table({"id": pa.array(keys, pa.int64())}), "id")
        for k in keys:
            self.model.pop(k, None)

    @rule()
    def compact(self) -> None:
        self.table.maintenance.rewrite_data_files(
            options={"min-input-files": 1, "rewrite-all": True, "remove-dangling-deletes": True}
        )
        if self.table.format_version >= 2:
            for task in self.table.scan().plan_files():
                # Every delete was applied, and the dangling ones removed.
                assert not task.delete_files

    @rule()
    def compact_deletes(self) -> None:
        self.table.maintenance.rewrite_position_delete_files(options={"rewrite-all": True})

    @invariant()
    def rows_equal_the_model(self) -> None:
        if not hasattr(self, "table"):
            return
        rows = self.table.scan().to_arrow().to_pylist()
        got: dict[int, Any] = {}
        for row in rows:
            assert row["id"] not in got, f"key {row['id']} twice"
            got[row["id"]] = (row["cat"], row["v"])
        assert got == self.model


SETTINGS = settings(
    max_examples=8,
    stateful_step_count=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


class V2MergeOnRead(_Machine):
    version, mode = 2, "merge-on-read"


class V2CopyOnWrite(_Machine):
    version, mode = 2, "copy-on-write"


class V3MergeOnRead(_Machine):
    version, mode = 3, "merge-on-read"


class V3CopyOnWrite(_Machine):
    version, mode = 3, "copy-on-write"


class V3ByKey(_Machine):
    # Partitioned by the key: upserts prune files by the keys' partitions.
    version, mode, partition = 3, "merge-on-read", ("id", "bucket[3]")


TestV2MergeOnRead = V2MergeOnRead.TestCase
TestV3ByKey = V3ByKey.TestCase
TestV2CopyOnWrite = V2CopyOnWrite.TestCase
TestV3MergeOnRead = V3MergeOnRead.TestCase
TestV3CopyOnWrite = V3CopyOnWrite.TestCase
for case in (
    TestV2MergeOnRead,
    TestV2CopyOnWrite,
    TestV3MergeOnRead,
    TestV3CopyOnWrite,
    TestV3ByKey,
):
    case.settings = SETTINGS
