"""FileSystemCatalog: Java's HadoopCatalog layout, commits by create-if-absent of the next
version file, and its refusals (rename, custom locations, object stores without
If-None-Match)."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest
from frazil.catalog.filesystem import FileSystemCatalog
from frazil.errors import (
    CommitFailedError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    TableAlreadyExistsError,
    UnsafeNameError,
    UnsupportedOperationError,
    ValidationError,
)

ARROW = pa.schema([("id", pa.int64()), ("name", pa.string())])


def test_layout_and_commits(tmp_path: Path) -> None:
    c = FileSystemCatalog("h", warehouse=str(tmp_path))
    c.create_namespace("a")
    c.create_namespace("a.b")
    with pytest.raises(NamespaceAlreadyExistsError):
        c.create_namespace("a")
    table = c.create_table("a.b.t", ARROW)
    metadata = tmp_path / "a" / "b" / "t" / "metadata"
    assert sorted(os.listdir(metadata)) == ["v1.metadata.json", "version-hint.text"]
    with table.update_properties() as update:
        update.set("k", "v")
    assert (metadata / "version-hint.text").read_text() == "2"
    assert table.metadata_location == str(metadata / "v2.metadata.json")
    assert c.list_namespaces() == [("a",)] and c.list_namespaces("a") == [("a", "b")]
    assert c.list_tables("a.b") == [("a", "b", "t")]
    assert c.load_namespace_properties("a.b") == {"location": str(tmp_path / "a" / "b")}
    # A stale writer loses the race for v3 and retries on v3.
    stale = c.load_table("a.b.t")
    with table.update_properties() as update:
        update.set("x", "1")
    with stale.update_properties() as update:
        update.set("y", "2")
    final = c.load_table("a.b.t")
    assert final.metadata_location == str(metadata / "v4.metadata.json")
    assert {"k", "x", "y"} <= set(final.properties)
    # The version file's creation is the commit: an existing next version refuses it.
    with pytest.raises(CommitFailedError, match=r"v4\.metadata\.json exists"):
        c._write_new_metadata(("a", "b", "t"), final.metadata, str(metadata / "v4.metadata.json"))
    # A stale hint is only a hint.
    (metadata / "version-hint.text").write_text("1")
    assert c.load_table("a.b.t").metadata_location == final.metadata_location


def test_tables_namespaces_and_refusals(tmp_path: Path) -> None:
    c = FileSystemCatalog("h", warehouse=str(tmp_path))
    with pytest.raises(NoSuchNamespaceError):
        c.create_table("nope.t", ARROW)
    c.create_namespace("db")
    c.create_table("db.t", ARROW)
    with pytest.raises(TableAlreadyExistsError):
        c.create_table("db.t", ARROW)
    with pytest.raises(ValidationError, match="lives in its directory"):
        c.create_table("db.u", ARROW, location=str(tmp_path / "elsewhere"))
    with pytest.raises(UnsupportedOperationError, match="renamed"):
        c.rename_table("db.t", "db.u")
    with pytest.raises(UnsupportedOperationError, match="properties"):
        c.create_namespace("x", {"k": "v"})
    with pytest.raises(NamespaceNotEmptyError):
        c.drop_namespace("db")
    for bad in (("db", ".."), ("db", "a/b"), ("..", "t")):
        with pytest.raises(UnsafeNameError):
            c.create_table(bad, ARROW)
    # A quote is a legal file name.
    quoted = c.create_table(("db", "o'brien"), ARROW)
    assert Path(quoted.location()) == tmp_path / "db" / "o'brien"
    tx = c.create_table_transaction("db.new", ARROW)
    tx.set_properties(owner="me")
    assert c.create_table_transaction("db.other", ARROW) is not None
    created = tx.commit_transaction()
    assert created.metadata_location == str(
        tmp_path / "db" / "new" / "metadata" / "v1.metadata.json"
    )
    assert created.properties["owner"] == "me"
    # register: a metadata file whose location is the target directory
    source = c.load_table("db.t")
    c.drop_table("db.new")
    with pytest.raises(ValidationError, match="is not"):
        c.register_table("db.new", source.metadata_location or "")
    c.drop_table("db.t")
    assert not (tmp_path / "db" / "t").exists()
    with pytest.raises(NoSuchTableError):
        c.load_table("db.t")
    c.drop_table(("db", "o'brien"), purge=True)
    c.drop_namespace("db")
    assert c.list_namespaces() == []


def test_object_store_without_conditional_writes_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A store whose second create-if-absent succeeds (it ignored If-None-Match) is refused
    before anything is written."""
    from frazil.catalog import filesystem
    from frazil.io import FileIO

    written: dict[str, bytes] = {}

    def write(self: FileIO, location: str, data: bytes, *, overwrite: bool = True) -> None:
        written[location] = data  # an old store: ignores the precondition

    monkeypatch.setattr(FileIO, "write", write)
    monkeypatch.setattr(FileIO, "delete", lambda self, location: written.pop(location, None))
    c = FileSystemCatalog("h", warehouse="s3://bucket-without-preconditions/wh")
    from frazil.table.create import new_table_metadata
    from frazil.table.read import schema_from_arrow

    metadata = new_table_metadata(
        schema_from_arrow(ARROW), "s3://bucket-without-preconditions/wh/db/t"
    )
    with pytest.raises(UnsupportedOperationError, match="If-None-Match"):
        c._create_from_metadata(("db", "t"), metadata)
    assert written == {}
    assert "s3://bucket-without-preconditions" not in filesystem._CONDITIONAL_OK


def test_os_errors_are_frazil_errors_naming_the_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from frazil.errors import FrazilError, FrazilIOError, PermissionDeniedError

    (tmp_path / "afile").write_text("x")
    # A warehouse under a file: NotADirectoryError.
    under_file = FileSystemCatalog("f", warehouse=str(tmp_path / "afile" / "wh"))
    with pytest.raises(FrazilIOError, match=r"cannot create namespace 'a' at .*afile/wh/a"):
        under_file.create_namespace("a")
    assert under_file.list_namespaces() == []
    c = FileSystemCatalog("f", warehouse=str(tmp_path))
    # A dangling symbolic link where the namespace would go: it exists, as a link.
    os.symlink(tmp_path / "nowhere", tmp_path / "dangling")
    with pytest.raises(NamespaceAlreadyExistsError, match="dangling"):
        c.create_namespace("dangling")
    # A symbolic link loop on the way.
    (tmp_path / "loop").mkdir()
    os.symlink(tmp_path / "loop" / "l", tmp_path / "loop" / "l")
    with pytest.raises(FrazilIOError, match=r"loop/l/x: Too many levels of symbolic links"):
        c.create_namespace(("loop", "l", "x"))
    # Denied access (simulated: the tests run as root, whom permissions do not stop).
    c.create_namespace("locked")
    real_listdir = os.listdir

    def denied(path: object = ".") -> list[str]:
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_listdir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "listdir", denied)
    for call in (lambda: c.list_tables("locked"), lambda: c.drop_namespace("locked")):
        with pytest.raises(PermissionDeniedError, match=r"cannot list .*locked: Permission denied"):
            call()
    monkeypatch.undo()
    # A deleted current directory with a relative warehouse.
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    with pytest.raises(FrazilError, match="'wh' absolute: the current directory is unavailable"):
        FileSystemCatalog("f", warehouse="wh")


def test_a_table_directory_that_cannot_be_deleted_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from frazil.errors import FrazilIOError

    c = FileSystemCatalog("f", warehouse=str(tmp_path))
    c.create_namespace("db")
    table = c.create_table("db.t", ARROW)
    table.append(pa.table({"id": [1], "name": ["a"]}))
    real_unlink = os.unlink

    def refuse_parquet(path: object, *args: object, **kwargs: object) -> None:
        if str(path).endswith(".parquet"):
            raise PermissionError(13, "Permission denied", str(path))
        real_unlink(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "unlink", refuse_parquet)
    with pytest.raises(FrazilIOError, match=r"left 1 file\(s\) of its directory .*\.parquet"):
        c.drop_table("db.t")
