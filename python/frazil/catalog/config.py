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

``type`` is ``sql``, ``rest``, ``filesystem`` (also ``hadoop``) or ``memory``; when absent it is
inferred as pyiceberg infers it: a ``uri`` starting with ``http://`` or ``https://`` means rest
(:class:`~frazil.catalog.rest.RestCatalog`), another ``uri`` sql, else a ``warehouse`` means
filesystem. Nested mappings in the file are flattened with dots, so pyiceberg's
``ssl: {client: {cert: ...}}`` is ``ssl.client.cert``. A relative local ``warehouse`` is
made absolute (against the current directory) when the catalog is created, so tables keep
their place when the program later runs elsewhere.

A name must be configured: a catalog the file or the variables name, or one whose keyword
arguments say what it is (``type``, ``uri`` or ``warehouse``). Any other name is an error
listing the configured catalogs, so a mistyped name never silently becomes a new, empty
catalog. The one exception: with no configuration at all (no file naming a catalog, no
``FRAZIL_CATALOG__`` variable), ``load_catalog("default")`` is an embedded SQLite catalog at
``./frazil-warehouse/catalog.db`` with the warehouse ``./frazil-warehouse`` (absolute paths of
the current directory). With a configuration, ``default`` is a name like any other; an entry
``default: {}`` (no ``uri``) gives the embedded catalog there too.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from frazil.catalog import Catalog, absolute_location
from frazil.errors import ValidationError

__all__ = ["catalog_properties", "load_catalog"]

ENV_PREFIX = "FRAZIL_CATALOG__"
DEFAULT_DIRECTORY = "frazil-warehouse"


def _config_file() -> Path:
    explicit = os.environ.get("FRAZIL_CONFIG")
    return Path(explicit) if explicit else Path.home() / ".frazil.yaml"


def _file_catalogs() -> tuple[Path | None, dict[str, Any]]:
    """The configuration file (None when there is none) and its catalogs by lower-cased name."""
    path = _config_file()
    if not path.is_file():
        if os.environ.get("FRAZIL_CONFIG"):
            raise ValidationError(f"FRAZIL_CONFIG names {path}, which is not a file")
        return None, {}
    import yaml  # type: ignore[import-untyped]

    try:
        loaded: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise ValidationError(f"{path}: not valid YAML ({error})") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ValidationError(f"{path}: cannot be read ({error})") from None
    if loaded is None:
        return path, {}
    if not isinstance(loaded, Mapping) or not isinstance(loaded.get("catalog", {}), Mapping):
        raise ValidationError(f"{path}: expected 'catalog: {{<name>: {{key: value}}}}'")
    return path, {str(k).lower(): v for k, v in (loaded.get("catalog") or {}).items()}


def _flatten(entry: Mapping[Any, Any], prefix: str = "") -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in entry.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(_flatten(value, name + "."))
        elif value is not None:
            out[name] = str(value).lower() if isinstance(value, bool) else str(value)
    return out


def _file_properties(path: Path | None, catalogs: Mapping[str, Any], name: str) -> dict[str, str]:
    entry = catalogs.get(name.lower()) or {}
    if not isinstance(entry, Mapping):
        raise ValidationError(f"{path}: catalog {name!r} must be a mapping of properties")
    return _flatten(entry)


def _env_catalogs() -> dict[str, dict[str, str]]:
    """The properties ``FRAZIL_CATALOG__<NAME>__<KEY>`` variables give, by lower-cased name."""
    found: dict[str, dict[str, str]] = {}
    for variable, value in os.environ.items():
        if not variable.upper().startswith(ENV_PREFIX):
            continue
        rest = variable[len(ENV_PREFIX) :]
        catalog, sep, key = rest.partition("__")
        if not sep or not key or not catalog:
            continue
        key = key.lower().replace("__", ".").replace("_", "-")
        found.setdefault(catalog.lower(), {})[key] = value
    return found


# Keyword arguments that say what a catalog is, so that they configure one on their own.
_DEFINING = ("type", "uri", "warehouse")


def catalog_properties(name: str, **properties: str) -> dict[str, str]:
    """The merged properties of catalog ``name`` (file < environment < ``properties``).

    Raises ValidationError when ``name`` is not configured (see the module docs)."""
    path, in_file = _file_catalogs()
    in_env = _env_catalogs()
    key = name.lower()
    configured = sorted(set(in_file) | set(in_env))
    known = key in in_file or key in in_env or any(properties.get(k) for k in _DEFINING)
    if not known and not (key == "default" and not configured):
        raise ValidationError(_unknown_catalog(name, path, configured))
    return {
        **_file_properties(path, in_file, name),
        **in_env.get(key, {}),
        **properties,
    }


def _unknown_catalog(name: str, path: Path | None, configured: list[str]) -> str:
    where = f"{path}" if path is not None else f"{_config_file()} (absent)"
    variables = f"{ENV_PREFIX}{name.upper()}__<KEY> variables"
    if configured:
        return (
            f"no catalog {name!r} is configured: the configured catalogs are "
            f"{', '.join(repr(c) for c in configured)} (from {where} and {ENV_PREFIX}* "
            f"variables); add {name!r} there or set {variables}"
        )
    return (
        f"no catalog {name!r} is configured: there is no configuration ({where}, no "
        f"{ENV_PREFIX}* variables), and without one only 'default', the embedded catalog in "
        f"./{DEFAULT_DIRECTORY}, exists; configure {name!r} in that file, set {variables}, or "
        "give its type, uri or warehouse"
    )


def _infer_type(props: Mapping[str, str]) -> str:
    uri = props.get("uri")
    if uri:
        return "rest" if uri.lower().startswith(("http://", "https://")) else "sql"
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
            directory = Path(absolute_location(DEFAULT_DIRECTORY))
            props.setdefault("warehouse", str(directory))
            from frazil.catalog._common import os_error

            try:
                directory.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise os_error(f"cannot create the embedded catalog's {directory}", error) from None
            props["uri"] = f"sqlite:///{directory / 'catalog.db'}"
        return SqlCatalog(name, **props)
    if kind in ("filesystem", "hadoop"):
        from frazil.catalog.filesystem import FileSystemCatalog

        return FileSystemCatalog(name, **props)
    if kind == "rest":
        from frazil.catalog.rest.catalog import RestCatalog

        return RestCatalog(name, **props)
    if kind in ("memory", "in-memory"):
        from frazil.catalog.memory import InMemoryCatalog

        return InMemoryCatalog(name, **props)
    raise ValidationError(
        f"catalog {name!r}: unknown type {kind!r} (expected sql, rest, filesystem or memory)"
    )
