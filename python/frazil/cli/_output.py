"""How the command line prints: readable tables (rich) by default, strict JSON with ``--json``.

JSON output is RFC 8259: no ``NaN`` or ``Infinity`` tokens (a non-finite float is the string
``"NaN"``, ``"Infinity"`` or ``"-Infinity"``); the command line's own keys are kebab-case, as in
Iceberg's JSON (a table's column names, property names and summary keys are data, kept as
written); a schema, spec, sort order or snapshot is its Iceberg JSON object. Row values follow
the spec's single-value JSON (Appendix D) where it has one: a decimal is a string (every digit
kept), binary and fixed are hex, a uuid is its canonical 8-4-4-4-12 text, dates and times are
ISO 8601; a map with string keys is an object, any other map a list of ``{"key", "value"}``.

Nothing here imports pyarrow or rich at module level: ``frazil --help`` stays fast.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import sys
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from decimal import Decimal
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

    from frazil.schema import Schema
    from frazil.types import IcebergType

__all__ = ["Output", "arrow_rows", "dumps", "kebab"]


def kebab(name: str) -> str:
    """``snapshot_id`` -> ``snapshot-id``: Iceberg's JSON key style."""
    return name.replace("_", "-")


def _finite(value: float) -> float | str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def _strict(value: Any) -> Any:
    """``value`` with its non-finite floats as strings and every other leaf JSON-ready."""
    if isinstance(value, float):
        return _finite(value)
    if isinstance(value, Mapping):
        return {str(k): _strict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_strict(v) for v in value]
    return _scalar(value)


def dumps(value: Any) -> str:
    """Strict JSON (RFC 8259): ``allow_nan=False`` proves no NaN token slipped through."""
    return json.dumps(_strict(value), allow_nan=False)


def _scalar(value: Any) -> Any:
    """A JSON-ready form of a leaf value (Appendix D's forms)."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (dt.date, dt.time, dt.datetime)) or hasattr(value, "isoformat"):
        return value.isoformat()
    if hasattr(value, "to_json"):
        return value.to_json()
    return str(value)


def _is_uuid(iceberg_type: IcebergType | None) -> bool:
    return iceberg_type is not None and str(iceberg_type) == "uuid"


def _children(iceberg_type: IcebergType | None) -> dict[str, IcebergType]:
    fields = getattr(iceberg_type, "fields", None) or ()
    return {f.name: f.field_type for f in fields}


def _cell(value: Any, arrow_type: pa.DataType, iceberg_type: IcebergType | None) -> Any:
    """A value from ``to_pylist`` as JSON-ready data, guided by its Arrow type and, where
    known, its Iceberg type (a uuid may arrive as ``fixed_size_binary(16)`` or as pyarrow's
    ``arrow.uuid`` extension type; either prints as canonical text)."""
    import pyarrow as pa

    if value is None:
        return None
    if isinstance(arrow_type, pa.BaseExtensionType):
        if arrow_type.extension_name == "arrow.uuid" or _is_uuid(iceberg_type):
            return str(value if isinstance(value, uuid.UUID) else uuid.UUID(bytes=bytes(value)))
        arrow_type = arrow_type.storage_type
    if pa.types.is_dictionary(arrow_type):
        arrow_type = arrow_type.value_type
    if pa.types.is_struct(arrow_type):
        children = _children(iceberg_type)
        return {f.name: _cell(value.get(f.name), f.type, children.get(f.name)) for f in arrow_type}
    if pa.types.is_map(arrow_type):
        key_type = getattr(iceberg_type, "key_type", None)
        value_type = getattr(iceberg_type, "value_type", None)
        entries = [
            (_cell(k, arrow_type.key_type, key_type), _cell(v, arrow_type.item_type, value_type))
            for k, v in value
        ]
        if pa.types.is_string(arrow_type.key_type) or pa.types.is_large_string(arrow_type.key_type):
            return dict(entries)
        return [{"key": k, "value": v} for k, v in entries]
    if (
        pa.types.is_list(arrow_type)
        or pa.types.is_large_list(arrow_type)
        or pa.types.is_fixed_size_list(arrow_type)
    ):
        element_type = getattr(iceberg_type, "element_type", None)
        return [_cell(v, arrow_type.value_type, element_type) for v in value]
    if _is_uuid(iceberg_type) and isinstance(value, (bytes, uuid.UUID)):
        return str(value if isinstance(value, uuid.UUID) else uuid.UUID(bytes=value))
    if pa.types.is_timestamp(arrow_type) and arrow_type.unit == "ns" and isinstance(value, int):
        return _nanos_iso(value, arrow_type.tz is not None)
    return _scalar(value)


def _nanos_iso(nanos: int, utc: bool) -> str:
    """A nanosecond timestamp (cast to int64 first: ``datetime`` holds only microseconds)."""
    seconds, fraction = divmod(nanos, 1_000_000_000)
    when = dt.datetime(1970, 1, 1) + dt.timedelta(seconds=seconds)
    return f"{when.isoformat()}.{fraction:09d}" + ("+00:00" if utc else "")


def _without_nanos(arrow_type: pa.DataType) -> pa.DataType:
    """``arrow_type`` with each nanosecond timestamp as int64, so ``to_pylist`` keeps every
    digit without pandas (:func:`_cell` formats them)."""
    import pyarrow as pa

    if pa.types.is_timestamp(arrow_type) and arrow_type.unit == "ns":
        return pa.int64()
    if pa.types.is_struct(arrow_type):
        return pa.struct([f.with_type(_without_nanos(f.type)) for f in arrow_type])
    if pa.types.is_map(arrow_type):
        return pa.map_(
            arrow_type.key_field.with_type(_without_nanos(arrow_type.key_type)),
            arrow_type.item_field.with_type(_without_nanos(arrow_type.item_type)),
        )
    if pa.types.is_list(arrow_type):
        return pa.list_(arrow_type.value_field.with_type(_without_nanos(arrow_type.value_type)))
    if pa.types.is_large_list(arrow_type):
        return pa.large_list(
            arrow_type.value_field.with_type(_without_nanos(arrow_type.value_type))
        )
    return arrow_type


def arrow_rows(
    table: pa.Table, schema: Schema | None = None, columns: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """The rows of an Arrow table as JSON-ready dicts, keyed by column name. ``schema`` (the
    Iceberg schema the table was read with) tells uuid columns from other fixed[16] ones."""
    names = list(columns) if columns is not None else list(table.column_names)
    iceberg = _children(schema.as_struct() if schema is not None else None)
    converted = []
    for name in names:
        column = table.column(name)
        storage = _without_nanos(column.type)
        values = (column.cast(storage) if storage != column.type else column).to_pylist()
        # Walked with the original type: where it says nanoseconds, the values are int64.
        converted.append([_cell(v, column.type, iceberg.get(name)) for v in values])
    return [dict(zip(names, row, strict=True)) for row in zip(*converted, strict=True)]


def _text(value: Any) -> str:
    """A JSON-ready value as a table cell."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        shown = _finite(value)
        return shown if isinstance(shown, str) else repr(shown)
    if isinstance(value, (Mapping, list, tuple)):
        return dumps(value)
    return str(_scalar(value))


class Output:
    """Prints records as a table (or JSON), documents, messages, and progress on stderr."""

    def __init__(self, as_json: bool, stream: Any = None) -> None:
        self.as_json = as_json
        self.stream = stream if stream is not None else sys.stdout

    def _console(self, stderr: bool = False) -> Any:
        from rich.console import Console

        stream = sys.stderr if stderr else self.stream
        # Piped output is not cut to 80 columns: scripts and logs get whole values.
        width = None if getattr(stream, "isatty", lambda: False)() else 200
        return Console(file=stream, soft_wrap=False, width=width)

    def records(
        self,
        rows: Sequence[Mapping[str, Any]],
        columns: Sequence[str],
        title: str | None = None,
        caption: str | None = None,
    ) -> None:
        """Rows: a JSON array of objects, or a table where NULL is shown as a dim ``NULL``
        (an empty string stays empty)."""
        if self.as_json:
            print(dumps([{c: r.get(c) for c in columns} for r in rows]), file=self.stream)
            return
        from rich.table import Table
        from rich.text import Text

        table = Table(title=title, caption=caption, show_lines=False)
        for column in columns:
            table.add_column(Text(column), overflow="fold")
        for row in rows:
            # Text, not str: rich would read "[b]" in a value as markup.
            table.add_row(
                *(
                    Text("NULL", style="dim italic")
                    if row.get(c) is None
                    else Text(_text(row.get(c)))
                    for c in columns
                )
            )
        self._console().print(table)

    def value(self, value: Any, text: str | None = None) -> None:
        """A document (a schema, a spec, a property map, a result): JSON, else ``text`` when
        given, a key/value table for a mapping, or indented JSON."""
        if self.as_json:
            print(dumps(value), file=self.stream)
        elif text is not None:
            print(text, file=self.stream)
        elif isinstance(value, Mapping):
            self.records([{"key": k, "value": v} for k, v in value.items()], ["key", "value"])
        else:
            print(json.dumps(_strict(value), indent=2), file=self.stream)

    def message(self, text: str) -> None:
        """A line for people (suppressed with --json, which prints only data)."""
        if not self.as_json:
            print(text, file=self.stream)

    def note(self, text: str) -> None:
        """A line for people that must not go unseen with --json (a truncated result): on
        stdout after a table, on stderr beside JSON."""
        print(text, file=sys.stderr if self.as_json else self.stream)

    @contextmanager
    def progress(self, description: str, total: int | None = None) -> Iterator[Any]:
        """A progress bar on stderr (none with --json or when stderr is not a terminal)."""
        from rich.progress import Progress

        disabled = self.as_json or not sys.stderr.isatty()
        with Progress(console=self._console(stderr=True), disable=disabled, transient=True) as bar:
            task = bar.add_task(description, total=total)
            yield lambda advance=1: bar.update(task, advance=advance)
