"""The ``write.metadata.*`` properties of a commit, as Java's ``BaseMetastoreTableOperations``
and ``HadoopTableOperations`` read them (issue 22: honoured or refused, never ignored):
``write.metadata.path`` (refused by file-system tables, as Java's Hadoop tables refuse it),
``write.metadata.compression-codec``, ``write.metadata.previous-versions-max`` and
``write.metadata.delete-after-commit.enabled``."""

from __future__ import annotations

import gzip
import json
import warnings
from pathlib import Path

import pyarrow as pa
import pytest
from frazil.catalog import Catalog
from frazil.catalog.filesystem import FileSystemCatalog
from frazil.catalog.sql import SqlCatalog
from frazil.errors import InvalidValueError, UnsupportedOperationError
from frazil.table import SetProperties
from frazil.warnings import FrazilWarning

SCHEMA = pa.schema([("id", pa.int64())])


def _catalog(kind: str, tmp_path: Path) -> Catalog:
    catalog: Catalog
    if kind == "sql":
        catalog = SqlCatalog("c", uri=f"sqlite:///{tmp_path}/c.db", warehouse=str(tmp_path / "w"))
    else:
        catalog = FileSystemCatalog("c", warehouse=str(tmp_path / "w"))
    catalog.create_namespace("db")
    return catalog


def _metadata_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("*.metadata.json"))


def _rows(n: int) -> pa.Table:
    return pa.table({"id": pa.array(range(n), pa.int64())})


def test_metadata_path_holds_every_metadata_file(tmp_path: Path) -> None:
    catalog = _catalog("sql", tmp_path)
    elsewhere = tmp_path / "meta"
    table = catalog.create_table(
        "db.t", SCHEMA, properties={"write.metadata.path": f"{elsewhere}/"}
    )
    table.append(_rows(3))
    table.append(_rows(2))
    names = sorted(p.name for p in elsewhere.iterdir())
    assert len([n for n in names if n.endswith(".metadata.json")]) == 3
    assert len([n for n in names if n.startswith("snap-")]) == 2  # manifest lists
    assert len([n for n in names if n.endswith("-m0.avro")]) == 2  # manifests
    assert not (Path(table.location()) / "metadata").exists()
    assert table.metadata_location.startswith(f"{elsewhere}/")  # type: ignore[union-attr]
    assert catalog.load_table("db.t").scan().count() == 5


def test_file_system_tables_refuse_a_metadata_path(tmp_path: Path) -> None:
    catalog = _catalog("fs", tmp_path)
    with pytest.raises(UnsupportedOperationError, match=r"write\.metadata\.path"):
        catalog.create_table("db.t", SCHEMA, properties={"write.metadata.path": str(tmp_path)})
    assert not catalog.table_exists("db.t")
    table = catalog.create_table("db.t", SCHEMA)
    with pytest.raises(UnsupportedOperationError, match="its own metadata/ directory"):
        with table.update_properties() as update:
            update.set("write.metadata.path", str(tmp_path / "meta"))
    assert "write.metadata.path" not in catalog.load_table("db.t").properties
    assert not (tmp_path / "meta").exists()


@pytest.mark.parametrize("kind", ["sql", "fs"])
def test_gzip_metadata_files(tmp_path: Path, kind: str) -> None:
    catalog = _catalog(kind, tmp_path)
    table = catalog.create_table(
        "db.t", SCHEMA, properties={"write.metadata.compression-codec": "GZIP"}
    )
    table.append(_rows(3))
    folder = Path(table.location()) / "metadata"
    files = _metadata_files(folder)
    assert files and all(name.endswith(".gz.metadata.json") for name in files)
    for name in files:
        assert json.loads(gzip.decompress((folder / name).read_bytes()))["format-version"] == 2
    assert catalog.load_table("db.t").scan().count() == 3


def test_an_unknown_metadata_codec_is_refused_when_set(tmp_path: Path) -> None:
    catalog = _catalog("sql", tmp_path)
    table = catalog.create_table("db.t", SCHEMA)
    with pytest.raises(InvalidValueError, match=r"write\.metadata\.compression-codec='zstd'"):
        with table.update_properties() as update:
            update.set("write.metadata.compression-codec", "zstd")
    for key, value in {
        "write.metadata.previous-versions-max": "many",
        "write.metadata.delete-after-commit.enabled": "yes",
        "write.summary.partition-limit": "-1",
        "commit.manifest.min-count-to-merge": "x",
    }.items():
        with pytest.raises(InvalidValueError, match=key.replace(".", r"\.")):
            catalog.create_table("db.u", SCHEMA, properties={key: value})


@pytest.mark.parametrize("kind", ["sql", "fs"])
def test_delete_after_commit_deletes_what_leaves_the_metadata_log(
    tmp_path: Path, kind: str
) -> None:
    catalog = _catalog(kind, tmp_path)
    table = catalog.create_table(
        "db.t",
        SCHEMA,
        properties={
            "write.metadata.previous-versions-max": "2",
            "write.metadata.delete-after-commit.enabled": "true",
        },
    )
    folder = Path(table.location()) / "metadata"
    for i in range(5):
        table.append(_rows(i + 1))
    kept = [Path(e.metadata_file).name for e in table.metadata.metadata_log]
    current = Path(table.metadata_location or "").name
    assert len(kept) == 2
    # The current file and the two the log names remain, as in Java; the other three are gone.
    assert _metadata_files(folder) == sorted([*kept, current])
    assert catalog.load_table("db.t").scan().count() == 15


def test_without_delete_after_commit_old_metadata_files_stay(tmp_path: Path) -> None:
    catalog = _catalog("sql", tmp_path)
    table = catalog.create_table(
        "db.t", SCHEMA, properties={"write.metadata.previous-versions-max": "2"}
    )
    for i in range(5):
        table.append(_rows(i + 1))
    assert len(table.metadata.metadata_log) == 2
    assert len(_metadata_files(Path(table.location()) / "metadata")) == 6


def test_a_metadata_file_that_cannot_be_deleted_is_a_warning(tmp_path: Path) -> None:
    catalog = _catalog("sql", tmp_path)
    table = catalog.create_table(
        "db.t",
        SCHEMA,
        properties={
            "write.metadata.previous-versions-max": "1",
            "write.metadata.delete-after-commit.enabled": "true",
        },
    )
    table.append(_rows(1))
    folder = Path(table.location()) / "metadata"
    oldest = Path(table.metadata.metadata_log[0].metadata_file)
    oldest.unlink()
    oldest.mkdir()  # a directory where the file was: the delete fails
    (oldest / "x").write_text("x")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table.append(_rows(1))
    (warning,) = caught
    assert issubclass(warning.category, FrazilWarning)
    assert "commit succeeded" in str(warning.message) and oldest.name in str(warning.message)
    assert catalog.load_table("db.t").scan().count() == 2
    assert len(_metadata_files(folder)) == 2 + 1  # the current, the one in the log, and oldest


def test_a_raw_update_commits_as_java_would(tmp_path: Path) -> None:
    # The catalog's commit itself applies no property checks: it is what another engine's
    # change looks like to frazil, and the writes then refuse what they cannot honour.
    catalog = _catalog("sql", tmp_path)
    table = catalog.create_table("db.t", SCHEMA)
    catalog.commit_table(table, [], [SetProperties({"write.summary.partition-limit": "-1"})])
    with pytest.raises(InvalidValueError, match=r"write\.summary\.partition-limit"):
        catalog.load_table("db.t").append(_rows(1))
