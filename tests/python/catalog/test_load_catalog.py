"""load_catalog: the configuration file, FRAZIL_CATALOG__ variables and keyword arguments, in
that order of precedence, and the embedded default."""

from __future__ import annotations

from pathlib import Path

import frazil
import pyarrow as pa
import pytest
from frazil.catalog.filesystem import FileSystemCatalog
from frazil.catalog.memory import InMemoryCatalog
from frazil.catalog.sql import SqlCatalog
from frazil.errors import ValidationError

ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False)])


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import os

    for key in list(os.environ):
        if key.startswith(("FRAZIL_CATALOG__", "FRAZIL_CONFIG")):
            monkeypatch.delenv(key)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)


def test_default_is_embedded_sqlite(tmp_path: Path) -> None:
    catalog = frazil.load_catalog()
    assert isinstance(catalog, SqlCatalog) and catalog.dialect == "sqlite"
    warehouse = tmp_path / "frazil-warehouse"
    assert catalog.properties["warehouse"] == str(warehouse)
    assert catalog.properties["uri"] == f"sqlite:///{warehouse / 'catalog.db'}"
    catalog.create_namespace("n")
    assert (warehouse / "catalog.db").is_file()
    assert frazil.load_catalog("default").list_namespaces() == [("n",)]


def test_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "conf.yaml"
    config.write_text(
        "catalog:\n"
        "  prod:\n"
        "    type: filesystem\n"
        f"    warehouse: {tmp_path / 'from-file'}\n"
        "    s3.region: file-region\n"
        "    client.region: file-client\n"
    )
    monkeypatch.setenv("FRAZIL_CONFIG", str(config))
    catalog = frazil.load_catalog("prod")
    assert isinstance(catalog, FileSystemCatalog)
    assert catalog.warehouse == str(tmp_path / "from-file")
    monkeypatch.setenv("FRAZIL_CATALOG__PROD__S3__REGION", "env-region")
    monkeypatch.setenv("FRAZIL_CATALOG__PROD__WAREHOUSE", str(tmp_path / "from-env"))
    monkeypatch.setenv("FRAZIL_CATALOG__PROD__PY_IO_IMPL", "x")
    monkeypatch.setenv("FRAZIL_CATALOG__OTHER__WAREHOUSE", "nope")
    catalog = frazil.load_catalog("prod")
    assert catalog.properties["s3.region"] == "env-region"
    assert catalog.properties["client.region"] == "file-client"
    assert catalog.properties["py-io-impl"] == "x"
    assert catalog.properties["warehouse"] == str(tmp_path / "from-env")
    catalog = frazil.load_catalog("prod", warehouse=str(tmp_path / "kw"), type="memory")
    assert isinstance(catalog, InMemoryCatalog)
    assert catalog.properties["warehouse"] == str(tmp_path / "kw")


def test_home_file_and_type_inference(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".frazil.yaml").write_text(
        f"catalog:\n  s:\n    uri: sqlite:///{tmp_path / 's.db'}\n    warehouse: {tmp_path}\n"
        f"  f:\n    warehouse: {tmp_path / 'fs'}\n"
    )
    assert isinstance(frazil.load_catalog("s"), SqlCatalog)
    assert isinstance(frazil.load_catalog("f"), FileSystemCatalog)
    with pytest.raises(ValidationError, match="unknown type 'hive'"):
        frazil.load_catalog("s", type="hive")
    # rest is a type now (tests/python/catalog/test_rest_client_config.py); a sqlite uri is
    # not a REST server's.
    with pytest.raises(ValidationError, match="not an http"):
        frazil.load_catalog("s", type="rest")


def test_bad_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FRAZIL_CONFIG", str(tmp_path / "missing.yaml"))
    with pytest.raises(ValidationError, match="not a file"):
        frazil.load_catalog("x")
    bad = tmp_path / "bad.yaml"
    bad.write_text("catalog: [1, 2]\n")
    monkeypatch.setenv("FRAZIL_CONFIG", str(bad))
    with pytest.raises(ValidationError, match=r"bad\.yaml"):
        frazil.load_catalog("x")


def _config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> Path:
    path = tmp_path / "frazil.yaml"
    path.write_text(text)
    monkeypatch.setenv("FRAZIL_CONFIG", str(path))
    return path


def test_a_mistyped_name_with_a_configuration_names_the_configured_catalogs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _config(
        tmp_path,
        monkeypatch,
        f"catalog:\n  prod:\n    uri: sqlite:///{tmp_path / 'p.db'}\n"
        f"    warehouse: {tmp_path / 'wh'}\n  dev:\n    type: memory\n    warehouse: {tmp_path}\n",
    )
    monkeypatch.setenv("FRAZIL_CATALOG__STAGING__WAREHOUSE", str(tmp_path / "staging"))
    for name in ("prdo", "default", "Prod2"):
        with pytest.raises(ValidationError) as raised:
            frazil.load_catalog(name)
        message = str(raised.value)
        assert f"no catalog {name!r} is configured" in message
        assert "'dev', 'prod', 'staging'" in message and "frazil.yaml" in message
    # Nothing was created for the mistyped names.
    assert not (tmp_path / "frazil-warehouse").exists()
    # Names are matched as pyiceberg matches them: case-insensitively.
    assert isinstance(frazil.load_catalog("PROD"), SqlCatalog)
    assert isinstance(frazil.load_catalog("staging"), FileSystemCatalog)
    # Keyword arguments that say what a catalog is define one on their own.
    assert isinstance(frazil.load_catalog("adhoc", type="memory", warehouse="w"), InMemoryCatalog)


def test_default_with_a_configuration_is_what_the_configuration_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An entry "default" with no uri is the embedded catalog, here as without configuration.
    _config(tmp_path, monkeypatch, "catalog:\n  default: {}\n  prod:\n    type: memory\n")
    catalog = frazil.load_catalog()
    assert isinstance(catalog, SqlCatalog)
    assert catalog.properties["warehouse"] == str(tmp_path / "frazil-warehouse")


def test_without_configuration_only_default_exists(tmp_path: Path) -> None:
    # The choice for a name other than "default" with no configuration at all: an error too
    # (it would otherwise be another empty catalog in ./frazil-warehouse/catalog.db).
    with pytest.raises(ValidationError) as raised:
        frazil.load_catalog("prdo")
    message = str(raised.value)
    assert "no catalog 'prdo' is configured: there is no configuration" in message
    assert "FRAZIL_CATALOG__PRDO__<KEY>" in message and "only 'default'" in message
    assert not (tmp_path / "frazil-warehouse").exists()
    assert isinstance(frazil.load_catalog("default"), SqlCatalog)
    # An empty configuration file names no catalog: "default" is still the embedded one.
    home = tmp_path / "home"
    home.mkdir()
    (home / ".frazil.yaml").write_text("")
    assert isinstance(frazil.load_catalog(), SqlCatalog)


def test_the_command_line_refuses_a_mistyped_catalog(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from frazil.cli import main

    _config(tmp_path, monkeypatch, f"catalog:\n  prod:\n    warehouse: {tmp_path / 'wh'}\n")
    import io
    from contextlib import redirect_stderr

    err = io.StringIO()
    with redirect_stderr(err):
        status = main(["--catalog", "prdo", "ns", "list"])
    assert status == 1
    assert "no catalog 'prdo' is configured: the configured catalogs are 'prod'" in err.getvalue()
    assert not (tmp_path / "frazil-warehouse").exists()


def test_a_relative_warehouse_is_stored_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _config(
        tmp_path,
        monkeypatch,
        "catalog:\n"
        "  s:\n    uri: sqlite:///s.db\n    warehouse: rel/wh\n"
        "  f:\n    warehouse: ./rel/fs\n"
        "  m:\n    type: memory\n    warehouse: ../up\n",
    )
    sql = frazil.load_catalog("s")
    assert sql.properties["warehouse"] == str(tmp_path / "rel" / "wh")
    assert frazil.load_catalog("f").properties["warehouse"] == str(tmp_path / "rel" / "fs")
    assert frazil.load_catalog("m").properties["warehouse"] == str(tmp_path.parent / "up")
    sql.create_namespace("db")
    table = sql.create_table("db.t", ARROW)
    assert table.location() == str(tmp_path / "rel" / "wh" / "db" / "t")
    # It stays where it was created when the program runs elsewhere.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    again = frazil.load_catalog("s", uri=f"sqlite:///{tmp_path / 's.db'}")
    assert again.load_table("db.t").location() == str(tmp_path / "rel" / "wh" / "db" / "t")
    # URIs are kept as they are.
    assert (
        frazil.load_catalog("x", type="memory", warehouse="s3://b/wh").properties["warehouse"]
        == "s3://b/wh"
    )


def test_a_relative_table_location_is_stored_absolute(tmp_path: Path) -> None:
    catalog = SqlCatalog("c", uri=f"sqlite:///{tmp_path / 'c.db'}", warehouse=str(tmp_path))
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", ARROW, location="tables/t")
    assert table.location() == str(tmp_path / "tables" / "t")
    assert catalog.load_table("db.t").metadata.location == str(tmp_path / "tables" / "t")
    assert (tmp_path / "tables" / "t" / "metadata").is_dir()
    # A file-system table's location is its directory: a relative spelling of it is accepted.
    fs = FileSystemCatalog("f", warehouse="fs")
    fs.create_namespace("db")
    assert fs.create_table("db.t", ARROW, location="fs/db/t").location() == str(
        tmp_path / "fs" / "db" / "t"
    )
