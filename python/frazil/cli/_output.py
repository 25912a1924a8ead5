"""How the command line prints: readable tables (rich) by default, JSON with ``--json``."""

from __future__ import annotations

import datetime as dt
import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

__all__ = ["Output"]


def _plain(value: Any) -> Any:
    """A JSON-ready form of a value from Arrow or the metadata model."""
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, (dt.date, dt.time, dt.datetime)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "to_json"):
        return value.to_json()
    return value if isinstance(value, (str, int, float, bool, type(None))) else str(value)


class Output:
    """Prints records as a table (or JSON), messages, and progress on stderr."""

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
        self, rows: Sequence[Mapping[str, Any]], columns: Sequence[str], title: str | None = None
    ) -> None:
        if self.as_json:
            print(
                json.dumps([{c: _plain(r.get(c)) for c in columns} for r in rows]), file=self.stream
            )
            return
        from rich.table import Table

        table = Table(title=title, show_lines=False)
        for column in columns:
            table.add_column(column, overflow="fold")
        for row in rows:
            table.add_row(*("" if row.get(c) is None else str(_plain(row.get(c))) for c in columns))
        self._console().print(table)

    def value(self, value: Any) -> None:
        """A document (a schema, a spec, a property map)."""
        if self.as_json:
            print(json.dumps(_plain(value)), file=self.stream)
        elif isinstance(value, Mapping):
            self.records(
                [{"key": k, "value": v} for k, v in sorted(value.items())], ["key", "value"]
            )
        else:
            print(
                value if isinstance(value, str) else json.dumps(_plain(value), indent=2),
                file=self.stream,
            )

    def message(self, text: str) -> None:
        """A line for people (suppressed with --json, which prints only data)."""
        if not self.as_json:
            print(text, file=self.stream)

    @contextmanager
    def progress(self, description: str, total: int | None = None) -> Iterator[Any]:
        """A progress bar on stderr (none with --json or when stderr is not a terminal)."""
        from rich.progress import Progress

        disabled = self.as_json or not sys.stderr.isatty()
        with Progress(console=self._console(stderr=True), disable=disabled, transient=True) as bar:
            task = bar.add_task(description, total=total)
            yield lambda advance=1: bar.update(task, advance=advance)
