"""``file:`` URIs name the path written in them, verbatim, as Java reads them.

Iceberg Java (HadoopFileIO: Hadoop's ``Path``) and pyiceberg (``urlparse``, no unquoting) take
a ``file:`` location's path literally, and Java's partition paths are URL-encoded values:
'é 1/x%' is ``s=%C3%A9+1%2Fx%25``, a directory spelled exactly so on disk. So frazil writes and
reads that literal directory under ``file:`` URIs too: Java reads every row of a table frazil
wrote under a ``file://`` warehouse whose path has a space, frazil reads every row of the same
table written by Java (by a ``file:`` URI of its metadata file as well as by its path), and both
lay out the same partition directories.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from frazil import StaticTable
from frazil.catalog.filesystem import FileSystemCatalog
from frazil.catalog.memory import InMemoryCatalog
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.types import NestedField, parse_type

pytestmark = pytest.mark.interop

VALUES = ["é 1/x%", "a b", "plain"]
ROWS = sorted((i, VALUES[i % 3]) for i in range(12))
# Java's partition path of each value (URLEncoder, UTF-8): the directory Java creates.
JAVA_DIRS = {"s=%C3%A9+1%2Fx%25", "s=a+b", "s=plain"}


def _rows(table: pa.Table) -> list[tuple[Any, ...]]:
    return sorted(zip(table.column("id").to_pylist(), table.column("s").to_pylist(), strict=True))


def _partition_dirs(data: Path) -> set[str]:
    """The partition directories of a table's data files, relative to ``data/``."""
    return {str(p.parent.relative_to(data)) for p in data.rglob("*.parquet")}


def _layouts(data: Path) -> set[str]:
    return {d.split("/")[0] for d in _partition_dirs(data)}


def _frazil_table(tmp_path: Path, kind: str) -> Any:
    warehouse = f"file://{tmp_path}/ware house"  # verbatim: a space, not %20
    catalog: Any
    if kind == "memory":
        catalog = InMemoryCatalog(warehouse=warehouse)
    else:
        catalog = FileSystemCatalog(warehouse=warehouse)
    catalog.create_namespace("db")
    schema = Schema(
        NestedField(1, "id", parse_type("long"), True),
        NestedField(2, "s", parse_type("string"), False),
    )
    spec = PartitionSpec(
        0,
        (
            PartitionField(2, 1000, "identity", "s"),
            PartitionField(2, 1001, "truncate[2]", "s_trunc"),
            PartitionField(1, 1002, "bucket[4]", "id_bucket"),
        ),
    )
    table = catalog.create_table("db.t", schema, partition_spec=spec, format_version=2)
    for start in (0, 6):
        chunk = ROWS[start : start + 6]
        table.append(
            pa.table(
                {
                    "id": pa.array([r[0] for r in chunk], pa.int64()),
                    "s": pa.array([r[1] for r in chunk]),
                }
            )
        )
    return table


@pytest.mark.parametrize("kind", ["memory", "filesystem"])
def test_java_reads_what_frazil_wrote_under_a_file_uri(
    spark: Any, tmp_path: Path, kind: str
) -> None:
    table = _frazil_table(tmp_path, kind)
    root = tmp_path / "ware house" / "db" / "t"
    if kind == "memory":
        # Every location stays a file: URI naming the directory with the space.
        assert table.location() == f"file://{root}"
        assert table.metadata_location.startswith(f"file://{root}/metadata/")
    assert _rows(table.scan().to_arrow()) == ROWS
    assert _rows(table.scan(row_filter="s = 'é 1/x%'").to_arrow()) == [
        r for r in ROWS if r[1] == "é 1/x%"
    ]
    # The files are in the directories Java names, spelled literally.
    assert _layouts(root / "data") == JAVA_DIRS
    for task in table.scan().plan_files():
        path = task.file.file_path
        assert Path(path.removeprefix("file://")).is_file(), path

    loaded = spark.read.format("iceberg").load(table.metadata_location)
    assert sorted(tuple(r) for r in loaded.select("id", "s").collect()) == ROWS


@pytest.mark.parametrize("where", ["fixture", "file-uri"])
def test_frazil_reads_what_java_wrote(spark: Any, tables: Any, tmp_path: Path, where: str) -> None:
    if where == "fixture":
        catalog, root = tables.catalog, tables.location("db", "file_uri_parity")
    else:
        # A second Hadoop catalog whose warehouse is a file:// URI with a space: Java's table
        # location, manifest lists and data file paths are then file: URIs too.
        catalog, warehouse = "spaced", tmp_path / "java ware house"
        spark.conf.set(f"spark.sql.catalog.{catalog}", "org.apache.iceberg.spark.SparkCatalog")
        spark.conf.set(f"spark.sql.catalog.{catalog}.type", "hadoop")
        spark.conf.set(f"spark.sql.catalog.{catalog}.warehouse", f"file://{warehouse}")
        root = warehouse / "db" / "file_uri_parity"
    name = f"{catalog}.db.file_uri_parity"
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {catalog}.db")
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    spark.sql(
        f"CREATE TABLE {name} (id bigint, s string) USING iceberg "
        "PARTITIONED BY (s, truncate(2, s), bucket(4, id)) TBLPROPERTIES ('format-version'='2')"
    )
    values = ", ".join(f"({i}, '{s}')" for i, s in ROWS)
    spark.sql(f"INSERT INTO {name} VALUES {values}")
    hint = (root / "metadata" / "version-hint.text").read_text().strip()
    metadata = root / "metadata" / f"v{hint}.metadata.json"
    data = root / "data"
    # Java made the literal directory s=%C3%A9+1%2Fx%25, not s=é 1/x%.
    assert _layouts(data) == JAVA_DIRS

    for form in (str(metadata), f"file://{metadata}", f"file:{metadata}"):
        table = StaticTable.from_metadata(form)
        if where == "file-uri":
            assert table.location().startswith("file:") and " " in table.location()
        assert _rows(table.scan().to_arrow()) == ROWS, form
        assert _rows(table.scan(row_filter="s = 'é 1/x%'").to_arrow()) == [
            r for r in ROWS if r[1] == "é 1/x%"
        ]
    # The same rows make the same partition directories in frazil (s_trunc=%C3%A9+, ...).
    _frazil_table(tmp_path, "memory")
    assert _partition_dirs(tmp_path / "ware house" / "db" / "t" / "data") == _partition_dirs(data)
