"""Catalog configuration, the way pyiceberg users configure theirs.

A catalog's properties are merged from, lowest first:

1. the configuration file, ``$FRAZIL_CONFIG`` if set, else ``~/.frazil.yaml``::

       catalog:
         prod:
           type: sql
           uri: postgresql://user@host/db
           warehouse: s3://bucket/warehouse

2. environment variables ``FRAZIL_CATALOG__<NAME>__<KEY>``, with pyiceberg's convention
   (its ``PYICEBERG_CATALOG__...``): the name and key are lower-cased, a double underscore
   inside the key is a dot and a single underscore a dash, so
   ``FRAZIL_CATALOG__PROD__S3__ACCESS_KEY_ID`` sets ``s3.access-key-id`` of catalog ``prod``;
3. keyword arguments of :func:`load_catalog`.

``type`` is ``sql``, ``filesystem`` (also ``hadoop``) or ``memory``; when absent it is inferred:
a ``uri`` means sql, else a ``warehouse`` means filesystem. With no configuration at all,
``load_catalog("default")`` is an embedded SQLite catalog at ``./frazil-warehouse/catalog.db``
with the warehouse ``./frazil-warehouse`` (absolute paths of the current directory).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from frazil.catalog import Catalog
from frazil.errors import ValidationError

__all__ = ["catalog_properties", "load_catalog"]

ENV_PREFIX = "FRAZIL_CATALOG__"
DEFAULT_DIRECTORY = "frazil-warehouse"


def _config_file() -> Path:
    explicit = os.environ.get("FRAZIL_CONFIG")
    return Path(explicit) if explicit else Path.home() / ".frazil.yaml"


def _file_properties(name: str) -> dict[str, str]:
    path = _config_file()
    if not path.is_file():
        if os.environ.get("FRAZIL_CONFIG"):
            raise ValidationError(f"FRAZIL_CONFIG names {path}, which is not a file")
        return {}
    import yaml  # type: ignore[import-untyped]

    try:
        loaded: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise ValidationError(f"{path}: not valid YAML ({error})") from None
    if loaded is None:
        return {}
    if not isinstance(loaded, Mapping) or not isinstance(loaded.get("catalog", {}), Mapping):
        raise ValidationError(f"{path}: expected 'catalog: {{<name>: {{key: value}}}}'")
    catalogs = {str(k).lower(): v for k, v in (loaded.get("catalog") or {}).items()}
    entry = catalogs.get(name.lower()) or {}
    if not isinstance(entry, Mapping):
        raise ValidationError(f"{path}: catalog {name!r} must be a mapping of properties")
    return {str(k): str(v) for k, v in entry.items() if v is not None}


def _env_properties(name: str) -> dict[str, str]:
    found = {}
    for variable, value in os.environ.items():
        if not variable.upper().startswith(ENV_PREFIX):
            continue
        rest = variable[len(ENV_PREFIX) :]
        catalog, sep, key = rest.partition("__")
        if not sep or not key or catalog.lower() != name.lower():
            continue
        found[key.lower().replace("__", ".").replace("_", "-")] = value
    return found


def catalog_properties(name: str, **properties: str) -> dict[str, str]:
    """The merged properties of catalog ``name`` (file < environment < ``properties``)."""
    return {**_file_properties(name), **_env_properties(name), **properties}


def _infer_type(props: Mapping[str, str]) -> str:
    if props.get("uri"):
        return "sql"
    if props.get("warehouse"):
        return "filesystem"
    return "sql"


def load_catalog(name: str | None = "default", **properties: str) -> Catalog:
    """The catalog ``name`` configured as the module docs say."""
    name = name or "default"
    props = catalog_properties(name, **properties)
    kind = (props.pop("type", None) or _infer_type(props)).lower()
    if kind == "sql":
        from frazil.catalog.sql import SqlCatalog

        if not props.get("uri"):
            directory = Path.cwd() / DEFAULT_DIRECTORY
            props.setdefault("warehouse", str(directory))
            directory.mkdir(parents=True, exist_ok=True)
            props["uri"] = f"sqlite:///{directory / 'catalog.db'}"
        return SqlCatalog(name, **props)
    if kind in ("filesystem", "hadoop"):
        from frazil.catalog.filesystem import FileSystemCatalog

        return FileSystemCatalog(name, **props)
    if kind in ("memory", "in-memory"):
        from frazil.catalog.memory import InMemoryCatalog

        return InMemoryCatalog(name, **props)
    raise ValidationError(
        f"catalog {name!r}: unknown type {kind!r} (expected sql, filesystem or memory)"
    )
