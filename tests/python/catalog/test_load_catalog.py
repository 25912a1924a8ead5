"""load_catalog: the configuration file, FRAZIL_CATALOG__ variables and keyword arguments, in
that order of precedence, and the embedded default."""

from __future__ import annotations

from pathlib import Path

import frazil
import pytest
from frazil.catalog.filesystem import FileSystemCatalog
from frazil.catalog.memory import InMemoryCatalog
from frazil.catalog.sql import SqlCatalog
from frazil.errors import ValidationError


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
    with pytest.raises(ValidationError, match="unknown type 'rest'"):
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
