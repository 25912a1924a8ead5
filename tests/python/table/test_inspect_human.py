"""Partition summary bounds as Java's ``Transform.toHumanString`` writes them (the text the
manifests metadata tables show), from Java 1.10's formatting rules."""

from __future__ import annotations

import struct
import uuid

import pytest
from frazil import types as t
from frazil import values
from frazil.table._human import human_string
from hypothesis import given
from hypothesis import strategies as st


def le(value: int, size: int = 8) -> bytes:
    return value.to_bytes(size, "little", signed=True)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1.0, "1.0"),
        (-2.5, "-2.5"),
        (0.001, "0.001"),
        (0.0001, "1.0E-4"),
        (1.5e-5, "1.5E-5"),
        (1234567.0, "1234567.0"),
        (1e7, "1.0E7"),
        (123456789.125, "1.23456789125E8"),
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (float("nan"), "NaN"),
        (float("-inf"), "-Infinity"),
    ],
)
def test_double(value: float, expected: str) -> None:
    assert human_string("identity", t.DoubleType(), struct.pack("<d", value)) == expected


def test_float_uses_the_shortest_single_precision_digits() -> None:
    assert human_string("identity", t.FloatType(), struct.pack("<f", 0.1)) == "0.1"
    assert human_string("identity", t.FloatType(), struct.pack("<f", 3.4e38)) == "3.4E38"


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_double_reads_back(value: float) -> None:
    text = human_string("identity", t.DoubleType(), struct.pack("<d", value))
    assert text is not None
    assert float(text) == value
    mantissa = text.split("E")[0]
    assert "." in mantissa and not mantissa.endswith(".")


@pytest.mark.parametrize(
    ("transform", "data", "expected"),
    [
        ("year", le(54, 4), "2024"),
        ("month", le(54 * 12 + 1, 4), "2024-02"),
        ("month", le(-1, 4), "1969-12"),
        ("day", le(19724, 4), "2024-01-02"),
        ("day", le(-1, 4), "1969-12-31"),
        ("hour", le(19724 * 24 + 5, 4), "2024-01-02-05"),
        ("hour", le(-1, 4), "1969-12-31-23"),
        ("void", b"", "null"),
    ],
)
def test_time_transforms(transform: str, data: bytes, expected: str) -> None:
    result_type = t.DateType() if transform == "day" else t.IntegerType()
    assert human_string(transform, result_type, data) == expected


MICROS = 1_704_164_645_000_000  # 2024-01-02T03:04:05Z


@pytest.mark.parametrize(
    ("iceberg_type", "data", "expected"),
    [
        (t.DateType(), le(19724, 4), "2024-01-02"),
        (t.TimeType(), le((10 * 60 + 15) * 60_000_000), "10:15"),
        (t.TimeType(), le(((10 * 60 + 15) * 60 + 30) * 1_000_000), "10:15:30"),
        (t.TimeType(), le(((10 * 60 + 15) * 60 + 30) * 1_000_000 + 500_000), "10:15:30.500"),
        (t.TimeType(), le(((10 * 60 + 15) * 60 + 30) * 1_000_000 + 123), "10:15:30.000123"),
        (t.TimestampType(), le(MICROS), "2024-01-02T03:04:05"),
        (t.TimestampType(), le(MICROS - 5_000_000), "2024-01-02T03:04:00"),
        (t.TimestampType(), le(MICROS + 500_000), "2024-01-02T03:04:05.5"),
        (t.TimestamptzType(), le(MICROS + 120), "2024-01-02T03:04:05.00012+00:00"),
        (t.TimestamptzType(), le(-1), "1969-12-31T23:59:59.999999+00:00"),
        (t.TimestampNanoType(), le(MICROS * 1000 + 7), "2024-01-02T03:04:05.000000007"),
        (t.BinaryType(), b"\x00\xff", "AP8="),
        (t.FixedType(3), b"abc", "YWJj"),
        (t.StringType(), "é".encode(), "é"),
        (t.BooleanType(), b"\x01", "true"),
        (t.LongType(), le(-42), "-42"),
        (t.DecimalType(9, 2), (1250).to_bytes(2, "big", signed=True), "12.50"),
    ],
)
def test_identity(iceberg_type: t.IcebergType, data: bytes, expected: str) -> None:
    assert human_string("identity", iceberg_type, data) == expected


def test_uuid_and_no_bound() -> None:
    text = "0f5c5c6e-7d65-4c1b-8c53-5c3c8a5f0b21"
    data = values.to_bytes("uuid", uuid.UUID(text))
    assert human_string("identity", t.UUIDType(), data) == text
    assert human_string("identity", t.UUIDType(), None) is None
