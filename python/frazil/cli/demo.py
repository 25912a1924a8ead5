"""``frazil demo``: the version and every transform applied to sample data."""

from __future__ import annotations

from typing import TYPE_CHECKING

import frazil

if TYPE_CHECKING:
    from frazil.cli._output import Output


def demo(out: Output) -> int:
    import datetime as dt

    import pyarrow as pa

    from frazil import transforms

    out.message(f"frazil {frazil.__version__}")
    ids = pa.array([34, -1, 0, 2**40, None], type=pa.int64())
    names = pa.array(["iceberg", "frazil", "日本語テキスト", "🧊🧊🧊🧊🧊", None])
    stamps = pa.array(
        [
            dt.datetime(2017, 11, 16, 22, 31, 8),
            dt.datetime(1969, 12, 31, 23, 59, 59, 999999),
            dt.datetime(1970, 1, 1),
            dt.datetime(2026, 11, 22, 12, 0),
            None,
        ],
        type=pa.timestamp("us"),
    )
    rows = [
        ("ids", ids, "bucket[16]", transforms.bucket(ids, 16)),
        ("ids", ids, "truncate[10]", transforms.truncate(ids, 10)),
        ("names", names, "bucket[16]", transforms.bucket(names, 16)),
        ("names", names, "truncate[3]", transforms.truncate(names, 3)),
        ("stamps", stamps, "year", transforms.year(stamps)),
        ("stamps", stamps, "month", transforms.month(stamps)),
        ("stamps", stamps, "day", transforms.day(stamps)),
        ("stamps", stamps, "hour", transforms.hour(stamps)),
    ]
    shown = []
    for column, source, name, result in rows:
        pairs = list(zip(source.to_pylist(), result.to_pylist(), strict=True))
        shown.append(
            {"transform": name, "column": column, "type": str(source.type), "values": pairs}
        )
        out.message(f"\n{name}({column}: {source.type})")
        for before, after in pairs:
            out.message(f"  {before!s:>28} -> {after}")
    if out.as_json:
        out.value({"version": frazil.__version__, "transforms": shown})
    return 0
