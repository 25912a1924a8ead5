"""The rows written to the scan-planning parity tables (tests/interop/scan_tables.py).

Values are frazil's Python values (see frazil.values): dates, naive datetimes for timestamp,
aware UTC datetimes for timestamptz, Decimal, bytes, uuid.UUID, datetime.time; a struct is a
dict. Dict keys are in the tables' column order (Spark DataFrames are built from them).
"""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal
from typing import Any

UTC = dt.timezone.utc
NAN = float("nan")
INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1


def utc(text: str) -> dt.datetime:
    """An aware UTC timestamp from ISO text without offset."""
    return dt.datetime.fromisoformat(text).replace(tzinfo=UTC)


def local(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text)


def day(text: str) -> dt.date:
    return dt.date.fromisoformat(text)


def dec(text: str | None) -> Decimal | None:
    return None if text is None else Decimal(text)


TYPES_DDL = (
    "id BIGINT, b BOOLEAN, i INT, l BIGINT, f FLOAT, d DOUBLE, dec DECIMAL(9,2), dt DATE, "
    "ts TIMESTAMP_NTZ, tstz TIMESTAMP, s STRING, bin BINARY, "
    "st STRUCT<a: INT, s: STRING, inner: STRUCT<x: DOUBLE, dt: DATE>>"
)
LONG_PREFIX = "iceberg-long-pre"  # 16 characters: long strings share their truncated bound


def types_row(batch: int, r: int) -> dict[str, Any]:
    """Batch k, row r: each batch holds its own ranges, so files differ in their metrics
    (batch 4, for the branch, repeats batch 0's values)."""
    k = batch % 4
    part = (True, False, None)[r % 3]
    i = [r - 6, 1000 + r, INT_MIN if r == 0 else -1000 - r, INT_MAX if r == 0 else 500 + r]
    l_ = [r * 10**12, -r, LONG_MIN if r == 1 else r, LONG_MAX if r == 2 else None]
    f = [
        r * 0.5 - 2.0,
        NAN if r % 3 == 0 else r * 0.25,
        NAN,
        (-0.0, 0.0, None if r % 2 else -0.0)[r % 3],
    ]
    d = [
        r * 1.5,
        None,
        (float("inf"), float("-inf"))[r % 2] if r < 2 else r * 1e10,
        (-0.0, 0.0, NAN)[r % 3],
    ]
    s = [
        ("", "a", "ab", "abc", "b", "ba", "bb", "c", "ca", "d", "da", "z")[r],
        f"{LONG_PREFIX}fix-{r:04d}",
        ("é", "😀x", "日本語テキスト", "\U0010ffff" * 20, "\U0010ffff" + "a" * 20, "ñu")[r % 6],
        None if r % 2 else f"{LONG_PREFIX}{'z' * r}",
    ]
    b = [bytes([r]), b"\x00" * 17 + bytes([r]), b"\xff" * 20, None if r % 2 else b""]
    dates = [
        day("1969-12-25") + dt.timedelta(days=r),
        day("2024-02-25") + dt.timedelta(days=r),
        day("1900-01-01") + dt.timedelta(days=30 * r),
        None if r % 2 else day("2100-12-31"),
    ]
    stamps = [
        local("1969-12-31T23:59:59.999995") + dt.timedelta(microseconds=r),
        local("2024-01-01T00:00:00") + dt.timedelta(hours=r),
        local("1950-06-15T00:00:00") + dt.timedelta(minutes=r),
        None if r % 2 else local("2038-01-19T03:14:07") + dt.timedelta(seconds=r),
    ]
    tz = [
        utc("1970-01-01T00:00:00") - dt.timedelta(hours=r),
        utc("2024-03-10T02:00:00") + dt.timedelta(minutes=17 * r),
        None,
        utc("1969-07-20T20:17:40") + dt.timedelta(days=r),
    ]
    st = (
        None
        if r == 5
        else {
            "a": k * 100 + r,
            "s": f"s{k}-{r}",
            "inner": None if r == 7 else {"x": (r * 0.5, NAN, -0.0, None)[k], "dt": dates[k]},
        }
    )
    return {
        "id": 100 * batch + r,
        "b": part,
        "i": None if k == 3 and r % 4 == 1 else i[k],
        "l": l_[k],
        "f": f[k],
        "d": d[k],
        "dec": Decimal(k * 1000 + r * 25 - 100) / 100,
        "dt": dates[k],
        "ts": stamps[k],
        "tstz": tz[k],
        "s": s[k],
        "bin": b[k],
        "st": st,
    }


TRANSFORM_COLUMNS: dict[str, list[Any]] = {
    "i": [
        INT_MIN,
        INT_MIN + 7,
        -11,
        -10,
        -1,
        0,
        9,
        10,
        11,
        99,
        100,
        INT_MAX,
        None,
        -100,
        5,
        INT_MAX - 7,
    ],
    "l": [
        LONG_MIN,
        -1001,
        -1000,
        -1,
        0,
        999,
        1000,
        LONG_MAX,
        None,
        123456789012,
        -123456789012,
        1,
        2,
        3,
        4,
        5,
    ],
    "dec": [
        dec(v)
        for v in (
            "-0.01",
            "0.00",
            "0.99",
            "1.00",
            "-1.00",
            "-0.99",
            "12345678.99",
            "-12345678.99",
            None,
            "0.50",
            "0.10",
            "-0.10",
            "99.99",
            "100.00",
            "5.55",
            "7.77",
        )
    ],
    "s": [
        "",
        "a",
        "ab",
        "abc",
        "abd",
        "abcdef",
        "abx",
        "b",
        "日本語テキスト",
        "😀😀😀😀",
        None,
        "zzzzzzzzzzzzzzzzzzzz-long",
        LONG_PREFIX + "0001",
        LONG_PREFIX + "0002",
        "ab ",
        "ABC",
    ],
    "bin": [
        b"",
        b"\x00",
        b"\x00\x01",
        b"\xff",
        b"\xff" * 5,
        b"\x7f",
        b"\x80",
        None,
        b"abc",
        b"abd",
        b"\x00" * 20,
        b"\xff" * 20,
        b"\x01\x02",
        b"\x10",
        b"\x11",
        b"\x12",
    ],
    "dt": [
        day(v) if v else None
        for v in (
            "1969-12-31",
            "1970-01-01",
            "1968-12-31",
            "1969-01-01",
            "2024-12-31",
            "2025-01-01",
            "2024-02-29",
            "2024-03-01",
            None,
            "1900-01-01",
            "2100-12-31",
            "1969-12-01",
            "1969-11-30",
            "2000-01-01",
            "1970-01-02",
            "1999-12-31",
        )
    ],
    "ts": [
        utc(v) if v else None
        for v in (
            "1969-12-31T23:59:59.999999",
            "1970-01-01T00:00:00",
            "1969-12-31T23:00:00",
            "1969-12-31T22:59:59.999999",
            "2024-03-01T00:00:00",
            "2024-02-29T23:59:59.999999",
            None,
            "1969-01-01T00:00:00",
            "1968-12-31T23:59:59.999999",
            "2024-06-15T12:30:00",
            "1970-01-01T01:00:00",
            "1970-01-01T00:59:59.999999",
            "1950-05-05T05:05:05",
            "2038-01-19T03:14:07",
            "2024-01-01T00:00:00",
            "2023-12-31T23:59:59.999999",
        )
    ],
}
TRANSFORM_COLUMNS["tsn"] = [
    None if v is None else v.replace(tzinfo=None) for v in reversed(TRANSFORM_COLUMNS["ts"])
]
TRANSFORM_EDGES: dict[str, list[Any]] = {
    "i": [INT_MIN + 9, -10, -1, 0],  # INT_MIN + 9: below it, truncate[10] wraps in Java
    "l": [LONG_MIN + 999, -1000, -1, 0],
    "dec": [dec("-0.01"), dec("0.00"), dec("1.00")],
    "s": ["ab", "abc", "日本"],
    "bin": [b"\x00", b"\xff\xff\xff\xff", b"ab"],
    "dt": [day("1969-01-01"), day("1970-01-01"), day("1969-12-31")],
    "ts": [
        utc("1970-01-01T00:00:00"),
        utc("1969-12-31T23:00:00"),
        utc("1969-12-31T23:59:59.999999"),
    ],
    "tsn": [
        local("1969-12-01T00:00:00"),
        local("1970-01-01T00:00:00"),
        local("1969-12-31T23:59:59.999999"),
    ],
}
TRANSFORMS_DDL = (
    "id BIGINT, cat STRING, i INT, l BIGINT, dec DECIMAL(10,2), s STRING, bin BINARY, "
    "dt DATE, ts TIMESTAMP, tsn TIMESTAMP_NTZ, x DOUBLE"
)


def transform_rows(round_: int) -> list[dict[str, Any]]:
    """16 rows, each in its own partition; every round writes the same partitions again
    (the non-partition column x differs)."""
    rows = []
    for r in range(16):
        row: dict[str, Any] = {"id": r, "cat": ("a", "b", "c", None)[r % 4]}
        row.update({name: values[r] for name, values in TRANSFORM_COLUMNS.items()})
        row["x"] = NAN if r == 3 else (round_ * 100 + r) * 0.5
        rows.append(
            {k: row[k] for k in ("id", "cat", "i", "l", "dec", "s", "bin", "dt", "ts", "tsn", "x")}
        )
    return rows


DV_DDL = "id BIGINT, cat STRING, ts TIMESTAMP, v DOUBLE, s STRING"


def dv_rows(base: int) -> list[dict[str, Any]]:
    """24 rows, four in each of six partitions (cat x day)."""
    return [
        {
            "id": base + n,
            "cat": "abc"[n % 3],
            "ts": utc("1969-12-31T12:00:00") + dt.timedelta(hours=12 * (n // 3 % 2), minutes=n),
            "v": NAN if n == 7 else n * 0.5,
            "s": f"{LONG_PREFIX}{n:03d}",
        }
        for n in range(24)
    ]


JAVA_SCHEMA: dict[str, Any] = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        {"id": 1, "name": "id", "required": True, "type": "long"},
        {"id": 2, "name": "b", "required": False, "type": "boolean"},
        {"id": 3, "name": "t", "required": False, "type": "time"},
        {"id": 4, "name": "u", "required": False, "type": "uuid"},
        {"id": 5, "name": "fx", "required": False, "type": "fixed[4]"},
        {"id": 6, "name": "dt", "required": False, "type": "date"},
        {"id": 7, "name": "big", "required": False, "type": "decimal(38,10)"},
        {"id": 8, "name": "s", "required": False, "type": "string"},
        {
            "id": 9,
            "name": "st",
            "required": False,
            "type": {
                "type": "struct",
                "fields": [
                    {"id": 10, "name": "su", "required": False, "type": "uuid"},
                    {"id": 11, "name": "stime", "required": False, "type": "time"},
                ],
            },
        },
    ],
}
UUID_FIRST_BYTES: dict[
    int, list[int | None]
] = {  # Java 1.10.2 orders uuids as signed: 0x80.. sorts before 0x7f..
    0: [0x00, 0x10, 0x3F, 0x7F, 0x01, 0x20, 0x55, 0x7E],
    1: [0x80, 0x90, 0xC0, 0xFF, 0x81, 0xA0, 0xEE, 0xFE],
    2: [0x00, 0xFF, 0x7F, 0x80, 0x40, 0xC0, 0x10, 0xF0],
    3: [0x7F, 0x80, None, 0x20, 0xD0, None, 0x60, 0x90],
}


def uuid_of(first: int | None, n: int) -> uuid.UUID | None:
    """A uuid whose first byte is ``first`` (None: null) and the other 15 are ``n``."""
    if first is None:
        return None
    return uuid.UUID(bytes=bytes([first]) + bytes([n] * 15))


def java_rows(k: int) -> list[dict[str, Any]]:
    rows = []
    for r in range(8):
        micros = [
            0,
            86_399_999_999,
            43_200_000_000,
            1,
            3_600_000_000 * r,
            None,
            59_999_999,
            86_399_999_998,
        ][(r + k) % 8]
        time_value = (
            None if micros is None else (dt.datetime.min + dt.timedelta(microseconds=micros)).time()
        )
        rows.append(
            {
                "id": 10 * k + r,
                "b": (True, False, None)[(r + k) % 3],
                "t": time_value,
                "u": uuid_of(UUID_FIRST_BYTES[k][r], 16 * k + r),
                "fx": None if r == 6 else bytes([k, r, 0xFF, 0x80 + r]),
                "dt": day("1969-12-30") + dt.timedelta(days=r * (k + 1)),
                "big": Decimal(f"{'-' if r % 2 else ''}{'9' * (20 + k)}.{r:010d}"),
                "s": f"{LONG_PREFIX}{k}{r}",
                "st": None
                if r == 3
                else {
                    "su": uuid_of(UUID_FIRST_BYTES[(k + 1) % 4][r], 16 * k + r),
                    "stime": time_value,
                },
            }
        )
    return rows
